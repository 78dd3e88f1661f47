import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import { findSecretsKey } from '../../../src/startup/channel-settings';
import { loadOrCreateKeyFile } from '../../../src/services/secrets/key-file';
import { openSecret, sealSecret } from '../../../src/services/secrets/secret-box';
import { parseSecretsKey, secretsKeyFrom } from '../../../src/services/secrets/secrets-key';

// docs/channels.md "Secrets at rest".

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'svc-secrets-'));
}

describe('secrets at rest', () => {
  describe('SECRETS_KEY', () => {
    const raw = randomBytes(32);
    it('takes 32 bytes as 64 hex characters or as base64 (standard or URL-safe)', () => {
      for (const text of [raw.toString('hex'), raw.toString('hex').toUpperCase(), raw.toString('base64'), raw.toString('base64url')]) {
        expect(parseSecretsKey(text)?.equals(raw), text).to.equal(true);
        expect(loadConfig({ SECRETS_KEY: text }).secretsKey?.equals(raw)).to.equal(true);
      }
    });

    it('refuses to start with anything else, without echoing the value', () => {
      for (const text of ['short', raw.toString('hex').slice(2), randomBytes(31).toString('base64'), randomBytes(33).toString('hex'), 'g'.repeat(64)]) {
        let message = '';
        try {
          loadConfig({ SECRETS_KEY: text });
        } catch (error) {
          message = (error as Error).message;
        }
        expect(message, text).to.contain('SECRETS_KEY: must be 32 random bytes');
        expect(message).not.to.contain(text);
      }
    });

    it('validates the senders\' environment like the rest', () => {
      const config = loadConfig({ SMTP_URL: 'smtps://u:p@mail.example:465', EMAIL_FROM: 'a@example.com', EMAIL_MAX_PER_SECOND: '7', WHATSAPP_MAX_PER_SECOND: '3' });
      expect(config.channels).to.deep.equal({
        smtpUrl: 'smtps://u:p@mail.example:465',
        emailFrom: 'a@example.com',
        bounceDomain: undefined,
        allowPrivateRelays: true,
        smtpUrlCaptures: false,
        emailMaxPerSecond: 7,
        whatsappApiUrl: 'https://graph.facebook.com/v21.0',
        whatsappMaxPerSecond: 3,
      });
      expect(loadConfig({}).channels).to.deep.include({ emailMaxPerSecond: 100, whatsappMaxPerSecond: 80 });
      // SMTP_ALLOW_PRIVATE_RELAYS: as WEBHOOK_ALLOW_INSECURE, on by default only on the embedded database.
      const mysql = 'mysql://svc:svc@db:3306/svc';
      expect(loadConfig({ DATABASE_URL: mysql }).channels.allowPrivateRelays).to.equal(false);
      expect(loadConfig({ DATABASE_URL: mysql, SMTP_ALLOW_PRIVATE_RELAYS: 'true' }).channels.allowPrivateRelays).to.equal(true);
      expect(loadConfig({ SMTP_ALLOW_PRIVATE_RELAYS: 'false' }).channels.allowPrivateRelays).to.equal(false);
      expect(loadConfig({ BOUNCE_DOMAIN: 'Bounces.Svc.Example' }).channels.bounceDomain).to.equal('bounces.svc.example');
      for (const [name, value] of [['SMTP_URL', 'http://mail.example'], ['EMAIL_FROM', 'nobody'], ['EMAIL_MAX_PER_SECOND', '0'], ['WHATSAPP_API_URL', 'graph'], ['UNSUBSCRIBE_LIMIT_PER_MINUTE', '-1'], ['BOUNCE_DOMAIN', 'not a domain'], ['SMTP_ALLOW_PRIVATE_RELAYS', 'yes']]) {
        expect(() => loadConfig({ [name]: value }), name).to.throw(name);
      }
    });

    it('keeps the data folder and the embedded database together', () => {
      expect(loadConfig({}).dataDir).to.equal('data');
      expect(loadConfig({ DATA_DIR: '/var/lib/svc' })).to.include({ dataDir: '/var/lib/svc', databaseUrl: 'sqlite:/var/lib/svc/service.sqlite' });
      expect(loadConfig({ DATABASE_URL: 'sqlite:/srv/db/app.sqlite' }).dataDir).to.equal('/srv/db');
      expect(loadConfig({ DATABASE_URL: 'mysql://svc:svc@db:3306/svc' }).dataDir).to.equal('data');
    });
  });

  describe('AES-256-GCM box', () => {
    const key = secretsKeyFrom(randomBytes(32));
    it('round-trips, with a version and key id prefix and a fresh IV each time', () => {
      const a = sealSecret(key, 'smtp://u:p@h', 'acc:col');
      const b = sealSecret(key, 'smtp://u:p@h', 'acc:col');
      expect(a).to.match(new RegExp(`^v1\\.${key.id}\\.`));
      expect(a).not.to.equal(b);
      expect(a).not.to.contain('u:p');
      expect(openSecret(key, a, 'acc:col')).to.equal('smtp://u:p@h');
    });

    it('refuses another key, another place, and any altered byte, naming none of the secret', () => {
      const sealed = sealSecret(key, 'token-123456', 'acc:col');
      expect(() => openSecret(secretsKeyFrom(randomBytes(32)), sealed, 'acc:col')).to.throw('another SECRETS_KEY');
      expect(() => openSecret(key, sealed, 'other:col')).to.throw('does not decrypt');
      const body = sealed.split('.')[2];
      const flipped = `${sealed.slice(0, sealed.length - body.length)}${body[0] === 'A' ? 'B' : 'A'}${body.slice(1)}`;
      expect(() => openSecret(key, flipped, 'acc:col')).to.throw('does not decrypt');
      expect(() => openSecret(key, 'plaintext', 'acc:col')).to.throw('not in a known format');
    });
  });

  describe('the embedded default\'s key file', () => {
    it('is made on the first start with mode 0600, and read at every start after', () => {
      const dir = path.join(tempDir(), 'data');
      const first = loadOrCreateKeyFile(dir);
      expect(first.created).to.equal(true);
      expect(first.file).to.equal(path.resolve(dir, 'secrets.key'));
      expect(fs.statSync(first.file).mode & 0o777).to.equal(0o600);
      expect(fs.readdirSync(dir)).to.deep.equal(['secrets.key']);
      const second = loadOrCreateKeyFile(dir);
      expect(second.created).to.equal(false);
      expect(second.key.equals(first.key)).to.equal(true);
    });

    it('is found through the configuration on SQLite, never on MySQL, and SECRETS_KEY wins', () => {
      const dir = tempDir();
      const sqlite = loadConfig({ DATA_DIR: dir });
      const key = findSecretsKey(sqlite);
      expect(key).not.to.equal(null);
      expect(fs.statSync(path.join(dir, 'secrets.key')).mode & 0o777).to.equal(0o600);
      expect(findSecretsKey(sqlite)!.id).to.equal(key!.id);

      const mysqlDir = tempDir();
      expect(findSecretsKey(loadConfig({ DATA_DIR: mysqlDir, DATABASE_URL: 'mysql://svc:svc@db:3306/svc' }))).to.equal(null);
      expect(fs.readdirSync(mysqlDir)).to.deep.equal([]);

      const raw = randomBytes(32);
      expect(findSecretsKey(loadConfig({ DATA_DIR: mysqlDir, DATABASE_URL: 'mysql://svc:svc@db:3306/svc', SECRETS_KEY: raw.toString('hex') }))!.id).to.equal(secretsKeyFrom(raw).id);
    });

    it('refuses to start on a key file that is not a key', () => {
      const dir = tempDir();
      fs.writeFileSync(path.join(dir, 'secrets.key'), 'garbage\n', { mode: 0o600 });
      expect(() => loadOrCreateKeyFile(dir)).to.throw('secrets.key: the secrets key file must be 32 random bytes');
    });
  });
});
