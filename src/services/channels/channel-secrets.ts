import { SecretsKeyMissingError } from '../../errors/app-errors';
import { openSecret, sealSecret } from '../secrets/secret-box';
import type { ChannelSettings } from './channel-settings';

// The channel tables' secret columns, each sealed to its account and column: a ciphertext
// copied to another account's row does not decrypt there.

export type SecretColumn = 'email_channels.smtp_url_secret' | 'email_channels.dkim_private_key_secret' | 'whatsapp_channels.access_token_secret';

const context = (accountId: string, column: SecretColumn) => `${accountId}:${column}`;

export function sealChannelSecret(settings: ChannelSettings, accountId: string, column: SecretColumn, plaintext: string): string {
  if (!settings.secrets) throw new SecretsKeyMissingError();
  return sealSecret(settings.secrets, plaintext, context(accountId, column));
}

export function openChannelSecret(settings: ChannelSettings, accountId: string, column: SecretColumn, stored: string): string {
  if (!settings.secrets) throw new SecretsKeyMissingError();
  return openSecret(settings.secrets, stored, context(accountId, column));
}
