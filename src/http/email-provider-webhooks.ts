import express, { type Request, type Response, type Router } from 'express';
import type { Database } from '../db/database';
import type { Logger } from '../logging/logger';
import type { FeedbackMetrics } from '../services/bounces/feedback-metrics';
import type { ActivitySettings } from '../services/activities/activity-settings';
import { recordFeedback, type Feedback, type FeedbackSource } from '../services/bounces/record-feedback';
import { sendgridEventsOf, sendgridFeedback } from '../services/bounces/sendgrid-events';
import { sendgridPublicKey, validSendgridSignature } from '../services/bounces/sendgrid-signature';
import { sesEventOf, sesFeedback } from '../services/bounces/ses-events';
import { confirmSnsSubscription, type SubscriptionConfirmer } from '../services/bounces/sns-subscription';
import { isSnsUrl, snsMessageOf, SnsCertificates, verifySnsMessage, type CertificateFetcher } from '../services/bounces/sns-signature';
import type { MessageMetrics } from '../services/messages/message-metrics';
import { BODY_LIMIT } from './json-body';
import { sendError } from './send-error';

// The email providers' event webhooks (docs/channels.md "Provider webhooks (SES, SendGrid)"),
// each on its own route outside /api/v1, with no API key: the provider proves itself by its
// signature over the body, read here as the bytes it signed.
// - POST /webhooks/email/ses: Amazon SNS messages of the topics SES_SNS_TOPIC_ARNS lists
//   (a topic anyone else made is refused, however well SNS signed it), their signature checked
//   with the certificate of an `sns.<region>.amazonaws.com` host; a SubscriptionConfirmation
//   is confirmed by fetching its SubscribeURL (the same hosts only).
// - POST /webhooks/email/sendgrid: SendGrid's Event Webhook, ECDSA-signed
//   (SENDGRID_WEBHOOK_PUBLIC_KEY).
// Not configured: 404, as for a path the service does not serve. The account is the message's
// each event names, never one the body says.

export interface EmailWebhookSettings {
  sesTopicArns: string[];
  sendgridPublicKey?: string;
  // SecretsKey.bounce and BOUNCE_DOMAIN: a VERP envelope sender the provider echoes names its message.
  bounceKey: Buffer | null;
  bounceDomain?: string;
}

export interface EmailWebhookDeps {
  db: Database;
  settings: EmailWebhookSettings;
  // Injectable for tests: the SNS signing certificate's fetch, the subscription's confirmation.
  fetchCertificate?: CertificateFetcher;
  confirmSubscription?: SubscriptionConfirmer;
  now?: () => Date;
  logger?: Logger;
  metrics?: FeedbackMetrics;
  messageMetrics?: MessageMetrics;
  // The intake's settings: bounces and complaints are recorded as activities (record-feedback.ts).
  activities?: ActivitySettings;
}

const CHUNK = 500;
const notConfigured = (what: string) => ({ status: 404, code: 'not_found' as const, message: `This webhook is not configured (${what})` });
const badSignature = (what: string) => ({ status: 401, code: 'invalid_signature' as const, message: `${what} is missing or does not match the body` });
const invalid = (path: string, message: string) => ({ status: 400, code: 'validation_failed' as const, message, details: [{ path, message }] });

function rawJson(req: Request): { raw: Buffer; payload: unknown } | null {
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  try {
    return { raw, payload: JSON.parse(raw.toString('utf8')) };
  } catch {
    return null;
  }
}

export function emailProviderWebhooks(deps: EmailWebhookDeps): Router {
  const { db, settings } = deps;
  const now = deps.now ?? (() => new Date());
  const certificates = new SnsCertificates(deps.fetchCertificate);
  const confirm = deps.confirmSubscription ?? confirmSnsSubscription;
  const topics = new Set(settings.sesTopicArns);
  const sendgridKey = settings.sendgridPublicKey ? sendgridPublicKey(settings.sendgridPublicKey) : null;
  const router = express.Router();
  // Whatever the Content-Type (SNS posts text/plain): the bytes as signed.
  const raw = express.raw({ type: () => true, limit: BODY_LIMIT });

  async function record(source: FeedbackSource, feedback: Feedback[], unknown: number, at: Date) {
    const totals = { received: feedback.length + unknown, matched: 0, unknown, changed: 0 };
    for (let start = 0; start < feedback.length; start += CHUNK) {
      const result = await recordFeedback(db, feedback.slice(start, start + CHUNK), { now: at, source, metrics: deps.metrics, messageMetrics: deps.messageMetrics, activities: deps.activities });
      totals.matched += result.matched;
      totals.unknown += result.unknown;
      totals.changed += result.changed;
    }
    if (unknown > 0) deps.metrics?.feedback.inc({ source, kind: 'event', outcome: 'unknown' }, unknown);
    return totals;
  }

  router.post('/ses', raw, async (req: Request, res: Response, next) => {
    try {
      if (topics.size === 0) return sendError(req, res, notConfigured('SES_SNS_TOPIC_ARNS'));
      const body = rawJson(req);
      if (!body) return sendError(req, res, { status: 400, code: 'malformed_json', message: 'Malformed JSON body' });
      const message = snsMessageOf(body.payload);
      if (!message) return sendError(req, res, invalid('Type', 'An SNS message has Type, MessageId, TopicArn, Message, Timestamp, SignatureVersion, Signature and SigningCertURL'));
      // Before the signature: a topic not listed costs no certificate fetch.
      if (!topics.has(message.TopicArn)) return sendError(req, res, { status: 403, code: 'forbidden', message: 'This topic is not one of SES_SNS_TOPIC_ARNS' });
      let verdict: 'valid' | 'invalid';
      try {
        verdict = await verifySnsMessage(message, certificates);
      } catch (error) {
        deps.logger?.warn({ err: error }, 'SES webhook: the SNS signing certificate could not be fetched');
        res.setHeader('Retry-After', '30');
        return sendError(req, res, { status: 503, code: 'service_unavailable', message: 'The signing certificate could not be fetched; try again' });
      }
      if (verdict !== 'valid') return sendError(req, res, badSignature('The SNS Signature (SignatureVersion 1 or 2, SigningCertURL on sns.<region>.amazonaws.com)'));

      if (message.Type === 'SubscriptionConfirmation') {
        if (!isSnsUrl(message.SubscribeURL)) return sendError(req, res, invalid('SubscribeURL', 'SubscribeURL must be https on sns.<region>.amazonaws.com'));
        try {
          await confirm(message.SubscribeURL);
        } catch (error) {
          deps.logger?.warn({ err: error }, 'SES webhook: confirming the SNS subscription failed');
          return sendError(req, res, { status: 503, code: 'service_unavailable', message: 'The subscription could not be confirmed; SNS will send the confirmation again' });
        }
        return res.json({ confirmed: true });
      }
      if (message.Type !== 'Notification') return res.json({ received: 0, matched: 0, unknown: 0, changed: 0 });
      let notification: unknown;
      try {
        notification = JSON.parse(message.Message);
      } catch {
        return sendError(req, res, invalid('Message', 'Message must be an SES notification (JSON)'));
      }
      const at = now();
      const event = sesEventOf(notification);
      const { feedback, unknown } = event ? await sesFeedback(db, { key: settings.bounceKey, bounceDomain: settings.bounceDomain }, [event], at) : { feedback: [], unknown: 0 };
      res.json(await record('ses', feedback, unknown, at));
    } catch (error) {
      next(error);
    }
  });

  router.post('/sendgrid', raw, async (req: Request, res: Response, next) => {
    try {
      if (!sendgridKey) return sendError(req, res, notConfigured('SENDGRID_WEBHOOK_PUBLIC_KEY'));
      const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const signature = req.get('x-twilio-email-event-webhook-signature');
      const timestamp = req.get('x-twilio-email-event-webhook-timestamp');
      if (!validSendgridSignature(sendgridKey, rawBody, signature, timestamp)) return sendError(req, res, badSignature('X-Twilio-Email-Event-Webhook-Signature'));
      const body = rawJson(req);
      if (!body) return sendError(req, res, { status: 400, code: 'malformed_json', message: 'Malformed JSON body' });
      const events = sendgridEventsOf(body.payload);
      if (!events) return sendError(req, res, invalid('body', 'The body must be an array of SendGrid events (at most 10,000)'));
      const at = now();
      const { feedback, unknown } = await sendgridFeedback(db, events, at);
      res.json(await record('sendgrid', feedback, unknown, at));
    } catch (error) {
      next(error);
    }
  });
  return router;
}
