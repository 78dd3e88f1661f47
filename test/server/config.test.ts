import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../src/config';

// docs/decisions.md "Configuration": every variable optional, with these defaults.

function loadError(env: NodeJS.ProcessEnv): Error {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).to.be.instanceOf(Error);
    return error as Error;
  }
  throw new Error(`expected loadConfig to reject ${JSON.stringify(env)}`);
}

describe('configuration', () => {
  describe('defaults', () => {
    it('uses an SQLite file under data/ when DATABASE_URL is unset', () => {
      const { databaseUrl } = loadConfig({});
      expect(databaseUrl).to.match(/^sqlite:/);
      const file = databaseUrl.slice('sqlite:'.length);
      expect(file).to.not.equal(':memory:');
      expect(path.normalize(file).split(path.sep)[0]).to.equal('data');
      expect(path.isAbsolute(file)).to.equal(false);
    });

    it('listens on 127.0.0.1:3000, this machine only (a first start prints a live key), with info logging', () => {
      expect(loadConfig({})).to.include({ port: 3000, host: '127.0.0.1', logLevel: 'info' });
    });

    it('lets webhooks reach this machine on the embedded database only, unless WEBHOOK_ALLOW_INSECURE says otherwise', () => {
      expect(loadConfig({}).webhookAllowInsecure).to.equal(true);
      expect(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).webhookAllowInsecure).to.equal(true);
      expect(loadConfig({ WEBHOOK_ALLOW_INSECURE: 'false' }).webhookAllowInsecure).to.equal(false);
      expect(loadConfig({ DATABASE_URL: 'mysql://svc:svc@db:3306/svc' }).webhookAllowInsecure).to.equal(false);
      expect(loadConfig({ DATABASE_URL: 'mysql://svc:svc@db:3306/svc', WEBHOOK_ALLOW_INSECURE: 'true' }).webhookAllowInsecure).to.equal(true);
      expect(loadError({ WEBHOOK_ALLOW_INSECURE: 'yes' }).message).to.include('WEBHOOK_ALLOW_INSECURE');
    });

    it('limits each key to 120 requests a minute and uses no Redis', () => {
      const config = loadConfig({});
      expect(config.rateLimitPerMinute).to.equal(120);
      expect(config.redisUrl).to.equal(undefined);
    });

    it('gives requests in progress 25 s to finish on shutdown, and takes SHUTDOWN_TIMEOUT_SECONDS', () => {
      expect(loadConfig({}).shutdownTimeoutMs).to.equal(25_000);
      expect(loadConfig({ SHUTDOWN_TIMEOUT_SECONDS: '2.5' }).shutdownTimeoutMs).to.equal(2_500);
      expect(loadError({ SHUTDOWN_TIMEOUT_SECONDS: '0' }).message).to.include('SHUTDOWN_TIMEOUT_SECONDS');
      expect(loadError({ SHUTDOWN_TIMEOUT_SECONDS: 'soon' }).message).to.include('SHUTDOWN_TIMEOUT_SECONDS');
    });

    it('waits 10 minutes for an SMTP reply to the final dot, and takes SMTP_DATA_TIMEOUT_MS up to an hour', () => {
      expect(loadConfig({}).smtpDataTimeoutMs).to.equal(600_000);
      expect(loadConfig({ SMTP_DATA_TIMEOUT_MS: '120000' }).smtpDataTimeoutMs).to.equal(120_000);
      for (const bad of ['0', '-5', '1.5', 'long', '3600001']) expect(loadError({ SMTP_DATA_TIMEOUT_MS: bad }).message).to.include('SMTP_DATA_TIMEOUT_MS');
    });

    it('keeps activities ACTIVITY_RETENTION_DAYS days, 90 unless told', () => {
      expect(loadConfig({}).activityRetentionDays).to.equal(90);
      expect(loadConfig({ ACTIVITY_RETENTION_DAYS: '30' }).activityRetentionDays).to.equal(30);
      for (const bad of ['0', '-1', '1.5', 'long', '3651']) expect(loadError({ ACTIVITY_RETENTION_DAYS: bad }).message).to.include('ACTIVITY_RETENTION_DAYS');
    });

    it('reads only the environment it is given', () => {
      const saved = process.env.PORT;
      process.env.PORT = '4567';
      try {
        expect(loadConfig({}).port).to.equal(3000);
        expect(loadConfig().port).to.equal(4567);
      } finally {
        if (saved === undefined) delete process.env.PORT;
        else process.env.PORT = saved;
      }
    });
  });

  describe('overrides', () => {
    it('takes every variable of the contract', () => {
      const config = loadConfig({
        DATABASE_URL: 'mysql://svc:secret@db.internal:3306/svc',
        PORT: '8080',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'debug',
        RATE_LIMIT_PER_MINUTE: '60',
        REDIS_URL: 'redis://cache.internal:6379',
      });
      expect(config).to.include({
        databaseUrl: 'mysql://svc:secret@db.internal:3306/svc',
        port: 8080,
        host: '127.0.0.1',
        logLevel: 'debug',
        rateLimitPerMinute: 60,
        redisUrl: 'redis://cache.internal:6379',
      });
    });

    it('accepts an SQLite file, an in-memory SQLite database and rediss://', () => {
      expect(loadConfig({ DATABASE_URL: 'sqlite:/var/lib/svc/db.sqlite' }).databaseUrl).to.equal('sqlite:/var/lib/svc/db.sqlite');
      expect(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).databaseUrl).to.equal('sqlite::memory:');
      expect(loadConfig({ REDIS_URL: 'rediss://cache:6380' }).redisUrl).to.equal('rediss://cache:6380');
    });

    it('accepts port 0 (any free port) and every log level', () => {
      expect(loadConfig({ PORT: '0' }).port).to.equal(0);
      for (const level of ['debug', 'info', 'warn', 'error', 'silent']) {
        expect(loadConfig({ LOG_LEVEL: level }).logLevel).to.equal(level);
      }
    });

    it('reads EMAIL_FROM as an address, or a name and an address', () => {
      expect(loadConfig({ EMAIL_FROM: 'news@shop.example' }).emailFrom).to.equal('news@shop.example');
      expect(loadConfig({ EMAIL_FROM: 'Shop <news@shop.example>' }).emailFrom).to.equal('Shop <news@shop.example>');
      expect(loadConfig({ EMAIL_FROM: '' }).emailFrom).to.equal(undefined);
    });

    it('ignores variables it does not know', () => {
      expect(loadConfig({ HOME: '/root', NODE_ENV: 'production' }).port).to.equal(3000);
    });
  });

  describe('empty variables', () => {
    it('treats every empty variable as unset', () => {
      const config = loadConfig({
        DATABASE_URL: '',
        PORT: '',
        HOST: '',
        LOG_LEVEL: '',
        RATE_LIMIT_PER_MINUTE: '',
        REDIS_URL: '',
      });
      expect(config).to.include({
        databaseUrl: loadConfig({}).databaseUrl,
        port: 3000,
        host: '127.0.0.1',
        logLevel: 'info',
        rateLimitPerMinute: 120,
      });
      expect(config.redisUrl).to.equal(undefined);
    });
  });

  describe('invalid values', () => {
    const cases: Array<[string, NodeJS.ProcessEnv, string]> = [
      ['a port that is not a number', { PORT: 'abc' }, 'PORT'],
      ['a port above 65535', { PORT: '70000' }, 'PORT'],
      ['a fractional port', { PORT: '80.5' }, 'PORT'],
      ['a negative port', { PORT: '-1' }, 'PORT'],
      ['a PostgreSQL database URL', { DATABASE_URL: 'postgres://svc:svc@localhost:5432/svc' }, 'DATABASE_URL'],
      ['a bare file name as database URL', { DATABASE_URL: 'data/service.sqlite' }, 'DATABASE_URL'],
      ['an unknown log level', { LOG_LEVEL: 'verbose' }, 'LOG_LEVEL'],
      ['a rate limit of 0', { RATE_LIMIT_PER_MINUTE: '0' }, 'RATE_LIMIT_PER_MINUTE'],
      ['a rate limit that is not a number', { RATE_LIMIT_PER_MINUTE: 'lots' }, 'RATE_LIMIT_PER_MINUTE'],
      ['a Redis URL of another scheme', { REDIS_URL: 'http://cache:6379' }, 'REDIS_URL'],
      ['an EMAIL_FROM that is no address', { EMAIL_FROM: 'Shop' }, 'EMAIL_FROM'],
      ['an EMAIL_FROM with a line break', { EMAIL_FROM: 'a@example.com\nBcc: b@example.com' }, 'EMAIL_FROM'],
    ];
    for (const [description, env, variable] of cases) {
      it(`refuses ${description}, naming ${variable}`, () => {
        expect(loadError(env).message).to.include(variable);
      });
    }

    it('names every invalid variable at once', () => {
      const { message } = loadError({ PORT: 'abc', LOG_LEVEL: 'loud' });
      expect(message).to.include('PORT');
      expect(message).to.include('LOG_LEVEL');
    });

    it('does not name variables that are fine', () => {
      const { message } = loadError({ PORT: 'abc', HOST: 'example.org' });
      expect(message).to.not.include('HOST');
    });
  });
});
