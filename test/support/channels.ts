import { generateKeyPairSync, randomBytes } from 'node:crypto';
import request from 'supertest';
import { createApp } from '../../src/app';
import { DEFAULT_CHANNEL_SETTINGS, type ChannelSettings } from '../../src/services/channels/channel-settings';
import { select } from '../../src/db/sql/statements';
import { addSendingDomain } from '../../src/services/channels/sending-domains';
import type { TxtResolver } from '../../src/services/channels/txt-lookup';
import { secretsKeyFrom } from '../../src/services/secrets/secrets-key';
import { silentLogger } from './app';
import { testDb } from './db';

// Channel settings with a fresh secrets key, as a start with SECRETS_KEY (or the key file) has.
export function channelSettings(overrides: Partial<ChannelSettings> = {}): ChannelSettings {
  // Relays on this machine allowed, as on the embedded default: the tests' SMTP servers listen on 127.0.0.1.
  return { ...DEFAULT_CHANNEL_SETTINGS, secrets: secretsKeyFrom(randomBytes(32)), publicBaseUrl: 'https://svc.example.com', allowPrivateRelays: true, ...overrides };
}

let rsa: string | undefined;
// One RSA key for the run: making a 2048-bit key takes a good part of a second.
export function dkimPrivateKey(): string {
  rsa ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  return rsa;
}

export function appWithChannels(channels: ChannelSettings | undefined, config: { unsubscribeLimitPerMinute?: number } = {}) {
  return createApp({
    db: testDb(),
    config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000, ...config },
    logger: silentLogger,
    channels,
  });
}

// Made at first use: the test database opens after the files are loaded.
export function channelsApi(channels: ChannelSettings | undefined) {
  let built: ReturnType<typeof appWithChannels> | undefined;
  const app = () => (built ??= appWithChannels(channels));
  return (key: string) => ({
    get: (path: string) => request(app()).get(`/api/v1${path}`).set('x-api-key', key),
    put: (path: string) => request(app()).put(`/api/v1${path}`).set('x-api-key', key),
  });
}

// A resolver that answers each _svc-verify.<domain> name with the token the database holds
// for it (as if every account had published its records), and nothing else.
export const publishedTokens: TxtResolver = async (name) => {
  const domain = /^_svc-verify\.(.+)$/.exec(name)?.[1];
  if (!domain) throw Object.assign(new Error(`queryTxt ENODATA ${name}`), { code: 'ENODATA' });
  const rows = await select<{ token: string }>(testDb(), 'SELECT token FROM email_domains WHERE domain = ?', [domain]);
  return rows.map((row) => [row.token]);
};

// The account's domain added and verified through the service, as a user who published its TXT record.
export async function verifiedSendingDomain(accountId: string, domain: string, settings: ChannelSettings = channelSettings()): Promise<void> {
  const { domain: added } = await addSendingDomain(testDb(), { accountId, domain }, { ...settings, resolveTxt: publishedTokens });
  if (added.status !== 'verified') throw new Error(`${domain} was not verified: ${JSON.stringify(added.records[0])}`);
}
