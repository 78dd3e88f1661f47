import { createPublicKey, verify, type KeyObject } from 'node:crypto';

// SendGrid's Event Webhook signature (docs/channels.md "Provider webhooks (SES, SendGrid)"):
// ECDSA P-256 with SHA-256 over the timestamp header's value followed by the raw body, the
// signature base64 (DER) in X-Twilio-Email-Event-Webhook-Signature, the timestamp in
// X-Twilio-Email-Event-Webhook-Timestamp. The key is the one the Event Webhook's settings show
// (base64 of the DER public key); a PEM is taken too.

export function sendgridPublicKey(text: string): KeyObject | null {
  try {
    const value = text.trim();
    const key = value.startsWith('-----BEGIN')
      ? createPublicKey(value)
      : createPublicKey({ key: Buffer.from(value.replace(/\s+/g, ''), 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? key : null;
  } catch {
    return null;
  }
}

export function validSendgridSignature(key: KeyObject, rawBody: Buffer, signature: string | undefined, timestamp: string | undefined): boolean {
  if (!signature || !timestamp || timestamp.length > 32) return false;
  try {
    return verify('sha256', Buffer.concat([Buffer.from(timestamp, 'utf8'), rawBody]), key, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}
