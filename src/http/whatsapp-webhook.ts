import express, { type Router } from 'express';
import type { Database } from '../db/database';
import { DEFAULT_ACTIVITY_SETTINGS, type ActivitySettings } from '../services/activities/activity-settings';
import { DEFAULT_CHANNEL_SETTINGS, type ChannelSettings } from '../services/channels/channel-settings';
import type { MessageMetrics } from '../services/messages/message-metrics';
import type { WhatsAppInboundMetrics } from '../services/messages/whatsapp-inbound-metrics';
import { receiveWhatsAppPost, verifyTokenMatches } from '../services/messages/whatsapp-webhook-post';
import { BODY_LIMIT } from './json-body';
import { sendError } from './send-error';

// /webhooks/whatsapp: Meta's webhook (docs/messages.md "The status webhook" and "Inbound
// messages"): the statuses of the messages sent, and what contacts send back. Outside
// /api/v1 and without an API key: Meta proves itself by the verify token (the GET handshake)
// and by signing each POST's raw body with the app's secret. The body is read here as bytes, as
// signed; the JSON parser of /api/v1 never sees it.
//
// An account may set its own app secret and verify token (PUT /channels/whatsapp): a POST is
// checked with the secret of the account its number belongs to, else WHATSAPP_APP_SECRET; the
// GET's token may be WHATSAPP_VERIFY_TOKEN or any account's (whatsapp-webhook-post.ts).
//
// Not configured (no verify token anywhere for the GET; for the POST, no WHATSAPP_APP_SECRET and
// no secret of an account its numbers name): 404, as for a path the service does not serve.
// There is nothing to retry until someone sets them, and Meta refuses to subscribe a URL whose
// handshake fails.

export interface WhatsAppWebhookSettings {
  appSecret?: string;
  verifyToken?: string;
}

const notConfigured = (what: string) => ({ status: 404, code: 'not_found' as const, message: `The WhatsApp status webhook is not configured (${what})` });
// What Meta's challenge is (a number, in practice): echoed as text, never markup.
const CHALLENGE = /^[\x21-\x7e]{1,256}$/;

export function whatsappWebhook(options: {
  db: Database;
  settings: WhatsAppWebhookSettings;
  channels?: ChannelSettings;
  metrics?: MessageMetrics;
  inbound?: WhatsAppInboundMetrics;
  now?: () => Date;
  // The intake's settings (reads and replies are recorded as activities); absent: the defaults.
  activities?: ActivitySettings;
}): Router {
  const { db, settings, metrics, inbound } = options;
  const channels = options.channels ?? DEFAULT_CHANNEL_SETTINGS;
  const now = options.now ?? (() => new Date());
  const router = express.Router();

  router.get('/', async (req, res, next) => {
    try {
      const mode = req.query['hub.mode'];
      const token = req.query['hub.verify_token'];
      const challenge = req.query['hub.challenge'];
      // A token that is no string (or too long to be one) matches nothing; only its answer's
      // kind (403 or 404) is read then.
      const given = typeof token === 'string' && token.length <= 256 ? token : '';
      const matches = await verifyTokenMatches(db, given, { verifyToken: settings.verifyToken, channels });
      if (matches === null) return sendError(req, res, notConfigured('WHATSAPP_VERIFY_TOKEN'));
      if (mode !== 'subscribe' || !matches) {
        return sendError(req, res, { status: 403, code: 'forbidden', message: 'hub.mode must be subscribe and hub.verify_token must match' });
      }
      if (typeof challenge !== 'string' || !CHALLENGE.test(challenge)) {
        return sendError(req, res, { status: 400, code: 'validation_failed', message: 'hub.challenge is required', details: [{ path: 'hub.challenge', message: 'hub.challenge is required' }] });
      }
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.type('text/plain').send(challenge);
    } catch (error) {
      next(error);
    }
  });

  router.post('/', express.raw({ type: () => true, limit: BODY_LIMIT }), async (req, res, next) => {
    try {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const outcome = await receiveWhatsAppPost(db, raw, req.get('x-hub-signature-256'), {
        appSecret: settings.appSecret,
        channels,
        now: now(),
        metrics,
        inbound,
        activities: options.activities ?? DEFAULT_ACTIVITY_SETTINGS,
      });
      switch (outcome.kind) {
        case 'not_configured':
          return sendError(req, res, notConfigured('WHATSAPP_APP_SECRET'));
        case 'invalid_signature':
          return sendError(req, res, { status: 401, code: 'invalid_signature', message: 'X-Hub-Signature-256 is missing or does not match the body' });
        case 'malformed_json':
          return sendError(req, res, { status: 400, code: 'malformed_json', message: 'Malformed JSON body' });
        case 'ok':
          return void res.json(outcome.body);
      }
    } catch (error) {
      next(error);
    }
  });

  return router;
}
