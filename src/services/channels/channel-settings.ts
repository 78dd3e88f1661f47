import type { SecretsKey } from '../secrets/secrets-key';
import type { TxtResolver } from './txt-lookup';

// What the channel code needs from the configuration, passed in (src/config.ts reads it;
// src/startup/secrets.ts finds the key).
export interface ChannelSettings {
  // Null: no SECRETS_KEY on a server database. Secrets cannot be stored (409
  // secrets_key_missing), nor read, nor unsubscribe links made or checked.
  secrets: SecretsKey | null;
  // SMTP_URL: the relay of accounts that set none.
  smtpUrl?: string;
  // EMAIL_FROM: the From of accounts that set none.
  emailFrom?: string;
  // SMTP_ALLOW_PRIVATE_RELAYS: an account's relay may be on a loopback, private, link-local or
  // metadata address (docs/channels.md "Verified sending domains and the DNS records").
  // Absent: refused.
  allowPrivateRelays?: boolean;
  // The DNS TXT lookups of the sending domains' checks; absent: node:dns's resolveTxt.
  resolveTxt?: TxtResolver;
  // Each of those lookups at most this long; absent: 5 s.
  txtTimeoutMs?: number;
  // EMAIL_MAX_PER_SECOND, WHATSAPP_MAX_PER_SECOND: each account's rate, and its cap.
  emailMaxPerSecond: number;
  whatsappMaxPerSecond: number;
  // WHATSAPP_API_URL: the Graph API's versioned base, without a trailing slash.
  whatsappApiUrl: string;
  // PUBLIC_BASE_URL, else the service's own address: where unsubscribe links point.
  publicBaseUrl: string;
  // BOUNCE_DOMAIN: the envelope sender's (VERP) domain of accounts that set no bounceDomain
  // (absent: the envelope sender is the From); with EMAIL_FROM's domain, the operator's own
  // domains, verified for every account.
  bounceDomain?: string;
  // UNSUBSCRIBE_MAILBOX: `List-Unsubscribe` gains `mailto:<local>+<token>@<domain>`.
  unsubscribeMailbox?: string;
}

export const DEFAULT_CHANNEL_SETTINGS: ChannelSettings = {
  secrets: null,
  emailMaxPerSecond: 100,
  whatsappMaxPerSecond: 80,
  whatsappApiUrl: 'https://graph.facebook.com/v21.0',
  publicBaseUrl: 'http://localhost:3000',
};
