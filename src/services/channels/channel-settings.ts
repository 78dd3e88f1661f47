import type { SecretsKey } from '../secrets/secrets-key';

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
  // EMAIL_MAX_PER_SECOND, WHATSAPP_MAX_PER_SECOND: each account's rate, and its cap.
  emailMaxPerSecond: number;
  whatsappMaxPerSecond: number;
  // WHATSAPP_API_URL: the Graph API's versioned base, without a trailing slash.
  whatsappApiUrl: string;
  // PUBLIC_BASE_URL, else the service's own address: where unsubscribe links point.
  publicBaseUrl: string;
  // BOUNCE_DOMAIN: the envelope sender's (VERP) domain; absent: the envelope sender is the From.
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
