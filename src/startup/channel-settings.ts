import { randomBytes } from 'node:crypto';
import type { Config } from '../config';
import { parseDatabaseUrl } from '../db/database-url';
import type { Logger } from '../logging/logger';
import type { ChannelSettings } from '../services/channels/channel-settings';
import { loadOrCreateKeyFile } from '../services/secrets/key-file';
import { secretsKeyFrom, type SecretsKey } from '../services/secrets/secrets-key';

// Which secrets key this process holds (docs/channels.md "Secrets at rest"):
// - SECRETS_KEY when set, whatever the database;
// - on the embedded SQLite file without it: data/secrets.key, made on the first start (0600);
// - on SQLite in memory: a key of this process only, as its data is;
// - on MySQL without it: none. Every instance and worker must hold the same key, which a file
//   on one machine cannot give; storing a secret then answers 409 secrets_key_missing.
export function findSecretsKey(config: Pick<Config, 'secretsKey' | 'databaseUrl' | 'dataDir'>, logger?: Logger): SecretsKey | null {
  if (config.secretsKey) return secretsKeyFrom(config.secretsKey);
  const target = parseDatabaseUrl(config.databaseUrl);
  if (target.dialect === 'mysql') {
    logger?.warn('SECRETS_KEY is not set: sender secrets (SMTP passwords, DKIM keys, WhatsApp tokens) cannot be stored, and unsubscribe links cannot be made');
    return null;
  }
  if (target.storage === ':memory:') return secretsKeyFrom(randomBytes(32));
  const { key, file, created } = loadOrCreateKeyFile(config.dataDir);
  if (created) logger?.warn({ file }, 'generated a secrets key for the embedded database; keep this file with the database (a copy of one without the other cannot read stored secrets)');
  return secretsKeyFrom(key);
}

export function channelSettingsFrom(config: Config, secrets: SecretsKey | null): ChannelSettings {
  return {
    secrets,
    smtpUrl: config.channels.smtpUrl,
    emailFrom: config.channels.emailFrom,
    allowPrivateRelays: config.channels.allowPrivateRelays,
    emailMaxPerSecond: config.channels.emailMaxPerSecond,
    whatsappMaxPerSecond: config.channels.whatsappMaxPerSecond,
    whatsappApiUrl: config.channels.whatsappApiUrl,
    publicBaseUrl: config.publicBaseUrl,
    bounceDomain: config.bounces.domain,
    unsubscribeMailbox: config.bounces.unsubscribeMailbox,
  };
}
