import { createHmac, hkdfSync } from 'node:crypto';
import { SecretsKeyMissingError } from '../../errors/app-errors';
import { openSecret, sealSecret } from '../secrets/secret-box';
import type { ChannelSettings } from './channel-settings';

// The channel tables' secret columns, each sealed to its account and column: a ciphertext
// copied to another account's row does not decrypt there.

export type SecretColumn =
  | 'email_channels.smtp_url_secret'
  | 'email_channels.dkim_private_key_secret'
  | 'whatsapp_channels.access_token_secret'
  | 'whatsapp_channels.app_secret_secret';

const context = (accountId: string, column: SecretColumn) => `${accountId}:${column}`;

export function sealChannelSecret(settings: ChannelSettings, accountId: string, column: SecretColumn, plaintext: string): string {
  if (!settings.secrets) throw new SecretsKeyMissingError();
  return sealSecret(settings.secrets, plaintext, context(accountId, column));
}

export function openChannelSecret(settings: ChannelSettings, accountId: string, column: SecretColumn, stored: string): string {
  if (!settings.secrets) throw new SecretsKeyMissingError();
  return openSecret(settings.secrets, stored, context(accountId, column));
}

// A WhatsApp webhook verify token is only ever compared, and Meta's handshake names no account:
// it is kept as an HMAC-SHA256 with a key derived from the secrets key (hex), so that the
// handshake finds it by one indexed lookup, and a copy of the table does not give it away.
export function verifyTokenHash(settings: ChannelSettings, token: string): string {
  if (!settings.secrets) throw new SecretsKeyMissingError();
  const key = Buffer.from(hkdfSync('sha256', settings.secrets.encryption, Buffer.alloc(0), 'svc whatsapp verify token v1', 32));
  return createHmac('sha256', key).update(token, 'utf8').digest('hex');
}
