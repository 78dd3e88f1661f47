import { generateKeyPairSync, randomBytes } from 'node:crypto';
import request from 'supertest';
import { createApp } from '../../src/app';
import { DEFAULT_CHANNEL_SETTINGS, type ChannelSettings } from '../../src/services/channels/channel-settings';
import { secretsKeyFrom } from '../../src/services/secrets/secrets-key';
import { silentLogger } from './app';
import { testDb } from './db';

// Channel settings with a fresh secrets key, as a start with SECRETS_KEY (or the key file) has.
export function channelSettings(overrides: Partial<ChannelSettings> = {}): ChannelSettings {
  return { ...DEFAULT_CHANNEL_SETTINGS, secrets: secretsKeyFrom(randomBytes(32)), publicBaseUrl: 'https://svc.example.com', ...overrides };
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
