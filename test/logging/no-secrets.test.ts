import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { DatabaseError } from 'sequelize';
import request from 'supertest';
import { createApp } from '../../src/app';
import { openDatabase, prepareDatabase, type Database } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrator';
import { withTransaction } from '../../src/db/sql/transaction';
import { createAccount } from '../../src/services/accounts';
import { createApiKey } from '../../src/services/api-keys';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import { rebindModelsToTestDb, TEST_DATABASE_URL } from '../support/db';
import { bufferLogger } from '../support/log-buffer';
import { channelSettings, dkimPrivateKey } from '../support/channels';
import { unsubscribeUrl } from '../../src/services/unsubscribe/unsubscribe-links';
import { signTrackingToken } from '../../src/services/signals/tracking-token';

// LOG_LEVEL=debug logs every SQL statement. Sequelize hands them over with the values inlined,
// so without care the log holds every key hash and every contact's personal data. Real
// requests through an app whose logger (and database) log at debug into a buffer; then the
// buffer is searched for what must never be in it.

const PERSON = {
  email: 'Grace.Hopper-7f3a@example.com',
  phone: '+447700900777',
  firstName: 'Gracezqx',
  lastName: 'Hopperwvy',
  customFields: { shoeSize: 'shoe-size-41-secret', address: { city: 'Arlingtonqq' } },
};
const SECOND = { email: 'ada.lovelace-91c2@example.com', phone: '+15550001111', firstName: 'Adaqzx', lastName: 'Lovelacexv' };

describe('logs at debug level', function () {
  this.timeout(60_000);
  let db: Database;
  let log: ReturnType<typeof bufferLogger>;

  before(async () => {
    log = bufferLogger('debug');
    // On MySQL the test database itself (already migrated); on SQLite a fresh one in memory.
    const url = TEST_DATABASE_URL.startsWith('mysql://') ? TEST_DATABASE_URL : 'sqlite::memory:';
    db = openDatabase(url, { logger: log.logger });
    await prepareDatabase(db);
    await migrateToLatest(db, log.logger);
  });
  after(async () => {
    await withTransaction(db, async () => undefined); // the last key-use write, queued after an answer
    await db.close();
    rebindModelsToTestDb();
  });

  it('show SQL statements, but no key, key hash or personal data, on any request or error', async () => {
    const app = createApp({ db, config: { rateLimitPerMinute: 1_000 }, logger: log.logger });
    const account = await createAccount(db, { name: 'Secret Corp' });
    const { key } = await createApiKey(db, { accountId: account.id, name: 'Shop' });
    const sequence = await createSequence(db, { accountId: account.id, name: 'Welcome', status: 'active' });
    const as = (test: request.Test) => test.set('x-api-key', key);

    const upsert = await as(request(app).post('/api/v1/contacts/upsert')).send(PERSON);
    expect(upsert.status, upsert.text).to.equal(201);
    const id = upsert.body.contact.id;
    expect((await as(request(app).post('/api/v1/contacts/upsert')).send({ ...PERSON, tags: ['vip'] })).status).to.equal(200);
    expect((await as(request(app).get(`/api/v1/contacts/by-email/${encodeURIComponent(PERSON.email)}`))).status).to.equal(200);
    expect((await as(request(app).put(`/api/v1/contacts/${id}`)).send({ lastName: PERSON.lastName })).status).to.equal(200);
    expect((await as(request(app).post('/trpc/contacts.create')).send(SECOND)).status).to.equal(200);
    const batch = await as(request(app).post('/api/v1/contacts/batch')).send({ contacts: [PERSON, SECOND] });
    expect(batch.status, batch.text).to.equal(201);
    const trigger = await as(request(app).post(`/api/v1/sequences/${sequence.id}/trigger`)).send({ contact: { email: PERSON.email } });
    expect(trigger.status, trigger.text).to.equal(202);
    // A wrong key is not logged either.
    const wrongKey = `svc_${'e'.repeat(40)}`;
    expect((await request(app).get(`/api/v1/contacts/${id}`).set('x-api-key', wrongKey)).status).to.equal(401);

    // A database error carrying the data it failed on, as MySQL's do, answered 500 and logged.
    const original = db.sequelize.query;
    db.sequelize.query = (async () => {
      const parent = Object.assign(new Error(`Duplicate entry '${PERSON.email}' for key 'contacts_email'`), {
        code: 'ER_DUP_ENTRY',
        errno: 1062,
        sqlMessage: `Duplicate entry '${PERSON.email}' for key 'contacts_email'`,
        sql: `INSERT INTO contacts (email, phone) VALUES ('${PERSON.email}', '${PERSON.phone}')`,
      });
      throw new DatabaseError(parent);
    }) as unknown as typeof original;
    let failed: request.Response;
    try {
      failed = await as(request(app).get(`/api/v1/contacts/${id}`));
    } finally {
      db.sequelize.query = original;
    }
    expect(failed.status).to.equal(500);

    const text = log.text();
    const records = log.records();

    const secrets = [
      key,
      key.slice(4), // without its prefix
      createHash('sha256').update(key).digest('hex'),
      wrongKey.slice(4),
      createHash('sha256').update(wrongKey).digest('hex'),
      PERSON.email,
      PERSON.email.toLowerCase(),
      encodeURIComponent(PERSON.email),
      PERSON.phone,
      PERSON.firstName,
      PERSON.lastName,
      PERSON.customFields.shoeSize,
      PERSON.customFields.address.city,
      SECOND.email,
      SECOND.phone,
      SECOND.firstName,
      SECOND.lastName,
    ];
    for (const secret of secrets) expect(text.toLowerCase(), `the logs contain ${secret}`).to.not.include(secret.toLowerCase());

    expect(records.filter((r) => r.msg === 'sql').length, 'SQL statements are logged at debug').to.be.greaterThan(10);
    expect(text).to.include('FROM api_keys WHERE key_hash = ?');
    const logged500 = records.find((r) => r.msg === 'unhandled error');
    expect(logged500, 'the 500 is logged').to.have.nested.property('err.parent.code', 'ER_DUP_ENTRY');
    expect(logged500).to.have.nested.property('err.message', 'Duplicate entry [values hidden]');
  });

  it('show no sender secret (SMTP password, DKIM key, WhatsApp token) and no unsubscribe token, on any request or failure', async () => {
    const channels = channelSettings();
    const app = createApp({ db, config: { rateLimitPerMinute: 1_000 }, logger: log.logger, channels });
    const account = await createAccount(db, { name: 'Sender Corp' });
    const { key } = await createApiKey(db, { accountId: account.id, name: 'Shop' });
    const as = (test: request.Test) => test.set('x-api-key', key);
    const password = 'smtp-pass-8c1f9a';
    const token = 'EAAGtokenvalue5d2e7b91';
    const privateKey = dkimPrivateKey();
    const email = await as(request(app).put('/api/v1/channels/email')).send({
      from: 'news@shop.example',
      smtpUrl: `smtps://news:${password}@smtp.shop.example:465`,
      dkim: { domain: 'shop.example', selector: 's1', privateKey },
    });
    expect(email.status, email.text).to.equal(200);
    expect((await as(request(app).put('/api/v1/channels/whatsapp')).send({ phoneNumberId: '1065', accessToken: token })).status).to.equal(200);
    // Refused ones too: a 400 and a 409.
    expect((await as(request(app).put('/api/v1/channels/email')).send({ from: 'nope', smtpUrl: `smtps://news:${password}@x` })).status).to.equal(400);
    const keyless = createApp({ db, config: { rateLimitPerMinute: 1_000 }, logger: log.logger, channels: { ...channels, secrets: null } });
    expect((await as(request(keyless).put('/api/v1/channels/whatsapp')).send({ phoneNumberId: '1065', accessToken: token })).status).to.equal(409);
    // A direct call of the logger with a sender's settings, as a careless call site might.
    log.logger.info({ settings: { smtpUrl: `smtps://news:${password}@x`, accessToken: token, dkim: { privateKey } } }, 'settings');
    const contact = await as(request(app).post('/api/v1/contacts')).send({ email: 'reader@example.com' });
    const link = unsubscribeUrl(channels, { accountId: account.id, contactId: contact.body.contact.id, channel: 'email' });
    const linkToken = new URL(link).pathname.slice(3);
    expect((await request(app).post(new URL(link).pathname).type('form').send('List-Unsubscribe=One-Click')).status).to.equal(200);

    // The open pixel's and a tracked link's tokens (a message that is not there: 200 and 404).
    const pixelToken = signTrackingToken(channels.secrets!.tracking, { kind: 'open', accountId: account.id, messageId: contact.body.contact.id, link: 0 });
    const clickToken = signTrackingToken(channels.secrets!.tracking, { kind: 'click', accountId: account.id, messageId: contact.body.contact.id, link: 0 });
    expect((await request(app).get(`/t/o/${pixelToken}`)).status).to.equal(200);
    expect((await request(app).get(`/t/c/${clickToken}`)).status).to.equal(404);

    const text = log.text();
    for (const secret of [password, token, privateKey.split('\n')[1], linkToken, pixelToken, clickToken]) expect(text, `the logs contain ${secret}`).not.to.include(secret);
    expect(log.records().some((r) => r.route === '/u/{token}')).to.equal(true);
    expect(log.records().some((r) => r.route === '/t/o/{token}')).to.equal(true);
    expect(log.records().some((r) => r.route === '/t/c/{token}')).to.equal(true);
  });
});
