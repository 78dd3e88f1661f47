import express, { type Router } from 'express';
import type { Database } from '../db/database';
import { applyWhatsAppStatuses, sameSecret, statusUpdatesOf, validMetaSignature } from '../services/messages/whatsapp-status-webhook';
import type { MessageMetrics } from '../services/messages/message-metrics';
import { BODY_LIMIT } from './json-body';
import { sendError } from './send-error';

// /webhooks/whatsapp: Meta's status webhook (docs/messages.md "The status webhook"). Outside
// /api/v1 and without an API key: Meta proves itself by the verify token (the GET handshake)
// and by signing each POST's raw body with the app's secret. The body is read here as bytes, as
// signed; the JSON parser of /api/v1 never sees it.
//
// Not configured (no WHATSAPP_VERIFY_TOKEN for the GET, no WHATSAPP_APP_SECRET for the POST):
// 404, as for a path the service does not serve. There is nothing to retry until the operator
// sets them, and Meta refuses to subscribe a URL whose handshake fails.

export interface WhatsAppWebhookSettings {
  appSecret?: string;
  verifyToken?: string;
}

const notConfigured = (what: string) => ({ status: 404, code: 'not_found' as const, message: `The WhatsApp status webhook is not configured (${what})` });
// What Meta's challenge is (a number, in practice): echoed as text, never markup.
const CHALLENGE = /^[\x21-\x7e]{1,256}$/;

export function whatsappWebhook(options: { db: Database; settings: WhatsAppWebhookSettings; metrics?: MessageMetrics; now?: () => Date }): Router {
  const { db, settings, metrics } = options;
  const now = options.now ?? (() => new Date());
  const router = express.Router();

  router.get('/', (req, res) => {
    if (!settings.verifyToken) return sendError(req, res, notConfigured('WHATSAPP_VERIFY_TOKEN'));
    const mode = req.query['hub.mode'];
    const token = req.query['hub.verify_token'];
    const challenge = req.query['hub.challenge'];
    if (mode !== 'subscribe' || typeof token !== 'string' || !sameSecret(token, settings.verifyToken)) {
      return sendError(req, res, { status: 403, code: 'forbidden', message: 'hub.mode must be subscribe and hub.verify_token must match' });
    }
    if (typeof challenge !== 'string' || !CHALLENGE.test(challenge)) {
      return sendError(req, res, { status: 400, code: 'validation_failed', message: 'hub.challenge is required', details: [{ path: 'hub.challenge', message: 'hub.challenge is required' }] });
    }
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type('text/plain').send(challenge);
  });

  router.post('/', express.raw({ type: () => true, limit: BODY_LIMIT }), async (req, res, next) => {
    try {
      if (!settings.appSecret) return sendError(req, res, notConfigured('WHATSAPP_APP_SECRET'));
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (!validMetaSignature(raw, req.get('x-hub-signature-256'), settings.appSecret)) {
        return sendError(req, res, { status: 401, code: 'invalid_signature', message: 'X-Hub-Signature-256 is missing or does not match the body' });
      }
      let payload: unknown;
      try {
        payload = JSON.parse(raw.toString('utf8'));
      } catch {
        return sendError(req, res, { status: 400, code: 'malformed_json', message: 'Malformed JSON body' });
      }
      const at = now();
      const result = await applyWhatsAppStatuses(db, statusUpdatesOf(payload, at), { now: at, metrics });
      res.json(result);
    } catch (error) {
      next(error);
    }
  });

  return router;
}
