import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { silentLogger } from '../support/app';
import { captureQueries, testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';

// POST /activities, POST /activities/batch and GET /contacts/{id}/activities (docs/activities.md):
// what is stored, what is refused (400 naming the field, 404, 409), and that a refusal writes
// nothing. The intake's clock is the test's: occurredAt's bounds are checked without sleeping.

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
let nowMs = Date.now();
const clock = () => new Date(nowMs);

let app: Express | undefined;
function activitiesApp(): Express {
  app ??= createApp({
    db: testDb(),
    config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 },
    logger: silentLogger,
    activities: { retentionDays: 90, now: clock },
  });
  return app;
}

function rest(key: string) {
  const agent = request(activitiesApp());
  return {
    post: (path: string) => agent.post(`/api/v1${path}`).set('x-api-key', key),
    get: (path: string) => agent.get(`/api/v1${path}`).set('x-api-key', key),
  };
}

async function count(table: string, accountId: string): Promise<number> {
  const [row] = await select<{ n: number | string }>(testDb(), `SELECT COUNT(*) AS n FROM ${table} WHERE account_id = ?`, [accountId]);
  return Number(row!.n);
}

async function written(accountId: string) {
  return { activities: await count('activities', accountId), contacts: await count('contacts', accountId), events: await count('events', accountId) };
}

describe('Activities REST API', () => {
  beforeEach(() => {
    nowMs = Date.now();
  });

  describe('POST /activities', () => {
    it('answers 202 with the stored activity, creating the contact named by a new email', async () => {
      const { key, accountId } = await buildTenant();
      const res = await rest(key)
        .post('/activities')
        .send({ contact: { email: 'Ada@Example.com' }, name: 'order_placed', properties: { orderId: '1042', total: 59.9 }, id: 'order-1042' });
      expect(res.status, res.text).to.equal(202);
      const { activity } = res.body;
      expect(activity).to.deep.include({ id: 'order-1042', name: 'order_placed', occurredAt: clock().toISOString(), duplicate: false });
      const contact = await rest(key).get('/contacts/by-email/ada%40example.com');
      expect(contact.status).to.equal(200);
      expect(contact.body.contact).to.deep.include({ id: activity.contactId, email: 'Ada@Example.com' });
      expect(await count('activities', accountId)).to.equal(1);
    });

    it('makes a UUID id when none is given, and keeps an occurredAt given', async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId);
      const occurredAt = new Date(nowMs - 3 * DAY).toISOString();
      const res = await rest(key).post('/activities').send({ contact: { id: contact.id }, name: 'signed_in', occurredAt });
      expect(res.status, res.text).to.equal(202);
      expect(res.body.activity.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(res.body.activity).to.deep.include({ contactId: contact.id, occurredAt, duplicate: false });
    });

    it('uses an existing contact named by email, whatever its case, and changes nothing of it', async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId, { email: 'grace@example.com', firstName: 'Grace', tags: ['vip'] });
      const res = await rest(key).post('/activities').send({ contact: { email: 'GRACE@example.com' }, name: 'viewed' });
      expect(res.status, res.text).to.equal(202);
      expect(res.body.activity.contactId).to.equal(contact.id);
      const after = await rest(key).get(`/contacts/${contact.id}`);
      expect(after.body.contact).to.deep.include({ firstName: 'Grace', tags: ['vip'], updatedAt: contact.updatedAt });
    });

    it('answers 404 for a contact id that is not a contact of the account, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const other = await buildTenant();
      const theirs = await buildContact(other.accountId);
      for (const id of [theirs.id, '0193a1c4-6b1e-7cc2-9a53-2f1f0b6a0c11', 'not-a-uuid']) {
        const res = await rest(key).post('/activities').send({ contact: { id }, name: 'viewed' });
        expect(res.status, id).to.equal(404);
        expect(res.body).to.deep.include({ error: 'Contact not found', code: 'not_found' });
      }
      expect(await written(accountId)).to.deep.equal({ activities: 0, contacts: 0, events: 0 });
    });

    it('answers a repeated id with the same name and properties with the stored activity, duplicate: true', async () => {
      const { key, accountId } = await buildTenant();
      const first = await rest(key)
        .post('/activities')
        .send({ contact: { email: 'a@example.com' }, name: 'cart_abandoned', id: 'cart:1', properties: { cartId: 'c1', items: [1, 2], meta: { a: 1, b: 2 } } });
      expect(first.status).to.equal(202);
      nowMs += 5_000;
      const again = await rest(key)
        .post('/activities')
        .send({ contact: { email: 'a@example.com' }, name: 'cart_abandoned', id: 'cart:1', properties: { meta: { b: 2, a: 1 }, items: [1, 2], cartId: 'c1' } });
      expect(again.status, again.text).to.equal(202);
      expect(again.body.activity).to.deep.equal({ ...first.body.activity, duplicate: true });
      expect(await count('activities', accountId)).to.equal(1);
    });

    it('answers 409 activity_conflict for a stored id with another name or other properties, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      await rest(key).post('/activities').send({ contact: { email: 'a@example.com' }, name: 'placed', id: 'o-1', properties: { total: 1 } });
      const before = await written(accountId);
      for (const body of [
        { contact: { email: 'new@example.com' }, name: 'placed', id: 'o-1', properties: { total: 2 } },
        { contact: { email: 'new@example.com' }, name: 'Placed', id: 'o-1', properties: { total: 1 } },
        { contact: { email: 'new@example.com' }, name: 'placed', id: 'o-1' },
      ]) {
        const res = await rest(key).post('/activities').send(body);
        expect(res.status, JSON.stringify(body)).to.equal(409);
        expect(res.body.code).to.equal('activity_conflict');
        expect(res.body.details).to.deep.equal([{ path: 'id', message: 'An activity with this id was stored with a different name or properties' }]);
      }
      // The contact the conflicting posts named by a new email was not created.
      expect(await written(accountId)).to.deep.equal(before);
    });

    const deep = (levels: number): Record<string, unknown> => {
      let value: Record<string, unknown> = { leaf: 1 };
      for (let level = 1; level < levels; level += 1) value = { nested: value };
      return value;
    };

    const refusals: Array<{ when: string; body: () => Record<string, unknown>; path: string }> = [
      { when: 'name is empty', body: () => ({ contact: { email: 'x@example.com' }, name: '' }), path: 'name' },
      { when: 'name is over 128 characters', body: () => ({ contact: { email: 'x@example.com' }, name: 'n'.repeat(129) }), path: 'name' },
      { when: 'name is missing', body: () => ({ contact: { email: 'x@example.com' } }), path: 'name' },
      { when: 'name holds a NUL', body: () => ({ contact: { email: 'x@example.com' }, name: 'a\u0000b' }), path: 'name' },
      { when: 'properties is an array', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', properties: [1] }), path: 'properties' },
      { when: 'properties is a string', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', properties: 'x' }), path: 'properties' },
      { when: 'properties is over 16 KiB', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', properties: { blob: 'é'.repeat(8 * 1024) } }), path: 'properties' },
      { when: 'properties nest 6 levels', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', properties: deep(6) }), path: 'properties' },
      { when: 'an array nests the 6th level', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', properties: { a: { b: { c: { d: [{ e: 1 }] } } } } }), path: 'properties' },
      { when: 'occurredAt is not ISO 8601', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', occurredAt: 'yesterday' }), path: 'occurredAt' },
      { when: 'occurredAt has no zone', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', occurredAt: '2026-12-01T10:00:00' }), path: 'occurredAt' },
      { when: 'occurredAt is over 24 h ahead', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', occurredAt: new Date(nowMs + DAY + 1).toISOString() }), path: 'occurredAt' },
      { when: 'occurredAt is older than the retention', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', occurredAt: new Date(nowMs - 90 * DAY - 1).toISOString() }), path: 'occurredAt' },
      { when: 'id has a space', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', id: 'a b' }), path: 'id' },
      { when: 'id is empty', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', id: '' }), path: 'id' },
      { when: 'id is over 128 characters', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', id: 'i'.repeat(129) }), path: 'id' },
      { when: 'id has a slash', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', id: 'a/b' }), path: 'id' },
      { when: 'contact has both email and id', body: () => ({ contact: { email: 'x@example.com', id: '0193a1c4-6b1e-7cc2-9a53-2f1f0b6a0c11' }, name: 'a' }), path: 'contact' },
      { when: 'contact has neither', body: () => ({ contact: {}, name: 'a' }), path: 'contact' },
      { when: 'contact is missing', body: () => ({ name: 'a' }), path: 'contact' },
      { when: 'contact.email is not an address', body: () => ({ contact: { email: 'nope' }, name: 'a' }), path: 'contact.email' },
      { when: 'a field is unknown', body: () => ({ contact: { email: 'x@example.com' }, name: 'a', propertys: {} }), path: 'propertys' },
    ];
    for (const refusal of refusals) {
      it(`answers 400 naming ${refusal.path || 'the body'} when ${refusal.when}, and writes nothing`, async () => {
        const { key, accountId } = await buildTenant();
        const res = await rest(key).post('/activities').send(refusal.body());
        expect(res.status, res.text).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.details[0].path).to.equal(refusal.path);
        expect(res.body.error).to.be.a('string');
        expect(await written(accountId)).to.deep.equal({ activities: 0, contacts: 0, events: 0 });
      });
    }

    it('accepts the bounds themselves: 128-character name and id, 5 levels, 24 h ahead, the retention\'s first instant', async () => {
      const { key } = await buildTenant();
      const bodies = [
        { name: 'n'.repeat(128), id: `${'i'.repeat(124)}.:_-` },
        { name: 'a', properties: deep(5) },
        { name: 'a', properties: { a: { b: { c: { d: [1, 2] } } } } },
        { name: 'a', occurredAt: new Date(nowMs + DAY).toISOString() },
        { name: 'a', occurredAt: new Date(nowMs - 90 * DAY).toISOString() },
        { name: 'a', properties: { blob: 'x'.repeat(16 * 1024 - 12) } },
      ];
      for (const body of bodies) {
        const res = await rest(key).post('/activities').send({ contact: { email: 'x@example.com' }, ...body });
        expect(res.status, res.text).to.equal(202);
      }
    });

    it('stores exactly one row when the same id is posted concurrently, and answers every post', async () => {
      const { key, accountId } = await buildTenant();
      const body = { contact: { email: 'race@example.com' }, name: 'clicked', id: 'race-1', properties: { n: 1 } };
      const answers = await Promise.all(Array.from({ length: 12 }, () => rest(key).post('/activities').send(body)));
      expect(answers.map((res) => res.status)).to.deep.equal(Array(12).fill(202));
      expect(answers.filter((res) => !res.body.activity.duplicate)).to.have.length(1);
      expect(new Set(answers.map((res) => res.body.activity.contactId)).size).to.equal(1);
      expect(await count('activities', accountId)).to.equal(1);
      expect(await count('contacts', accountId)).to.equal(1);
    });

    it('replays the answer of a request sent again with its Idempotency-Key, and stores one activity', async () => {
      const { key, accountId } = await buildTenant();
      const body = { contact: { email: 'idem@example.com' }, name: 'clicked' };
      const first = await rest(key).post('/activities').set('Idempotency-Key', 'k-1').send(body);
      const again = await rest(key).post('/activities').set('Idempotency-Key', 'k-1').send(body);
      expect(first.status).to.equal(202);
      expect(again.status).to.equal(202);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect(await count('activities', accountId)).to.equal(1);
    });
  });

  describe('POST /activities/batch', () => {
    it('answers 202 with a summary and every item in request order', async () => {
      const { key, accountId } = await buildTenant();
      const known = await buildContact(accountId);
      await rest(key).post('/activities').send({ contact: { id: known.id }, name: 'seen', id: 'old' });
      const res = await rest(key)
        .post('/activities/batch')
        .send({
          activities: [
            { contact: { email: 'b1@example.com' }, name: 'a', id: 'z-1' },
            { contact: { id: known.id }, name: 'seen', id: 'old' },
            { contact: { email: 'B1@example.com' }, name: 'b', id: 'a-2' },
            { contact: { email: 'b1@example.com' }, name: 'a', id: 'z-1' },
          ],
        });
      expect(res.status, res.text).to.equal(202);
      expect(res.body.summary).to.deep.equal({ total: 4, accepted: 2, duplicates: 2 });
      const [first, second, third, fourth] = res.body.activities;
      expect(first).to.deep.include({ id: 'z-1', duplicate: false });
      expect(second).to.deep.equal({ id: 'old', contactId: known.id, duplicate: true });
      expect(third).to.deep.equal({ id: 'a-2', contactId: first.contactId, duplicate: false });
      expect(fourth).to.deep.equal({ ...first, duplicate: true });
      expect(await count('activities', accountId)).to.equal(3);
    });

    it('answers 400 naming activities.N.<field> for one bad item, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const good = { contact: { email: 'g@example.com' }, name: 'ok' };
      const cases: Array<{ item: Record<string, unknown>; path: string }> = [
        { item: { contact: { email: 'g@example.com' }, name: '' }, path: 'activities.2.name' },
        { item: { contact: { email: 'g@example.com' }, name: 'a', id: 'bad id' }, path: 'activities.2.id' },
        { item: { contact: { email: 'g@example.com' }, name: 'a', properties: { a: { b: { c: { d: { e: {} } } } } } }, path: 'activities.2.properties' },
        { item: { contact: { email: 'g@example.com' }, name: 'a', occurredAt: new Date(nowMs + 2 * DAY).toISOString() }, path: 'activities.2.occurredAt' },
        { item: { contact: { id: '0193a1c4-6b1e-7cc2-9a53-2f1f0b6a0c11' }, name: 'a' }, path: 'activities.2.contact.id' },
        { item: { contact: { email: 'g@' }, name: 'a' }, path: 'activities.2.contact.email' },
      ];
      for (const { item, path } of cases) {
        const res = await rest(key).post('/activities/batch').send({ activities: [good, good, item] });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.details[0].path).to.equal(path);
        expect(res.body.error).to.match(new RegExp(`^${path.replace(/\./g, '\\.')}: `));
      }
      for (const activities of [[], Array(501).fill(good)]) {
        const res = await rest(key).post('/activities/batch').send({ activities });
        expect(res.status).to.equal(400);
        expect(res.body.details[0].path).to.equal('activities');
      }
      expect(await written(accountId)).to.deep.equal({ activities: 0, contacts: 0, events: 0 });
    });

    it('answers 409 activity_conflict naming the item whose id is stored otherwise, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      await rest(key).post('/activities').send({ contact: { email: 'a@example.com' }, name: 'placed', id: 'o-1' });
      const before = await written(accountId);
      const res = await rest(key)
        .post('/activities/batch')
        .send({ activities: [{ contact: { email: 'n1@example.com' }, name: 'x', id: 'new' }, { contact: { email: 'n2@example.com' }, name: 'other', id: 'o-1' }] });
      expect(res.status, res.text).to.equal(409);
      expect(res.body.code).to.equal('activity_conflict');
      expect(res.body.details).to.deep.equal([{ path: 'activities.1.id', message: 'An activity with this id was stored with a different name or properties' }]);
      expect(await written(accountId)).to.deep.equal(before);
    });

    it('answers 409 naming the second of two items with one id that differ, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const res = await rest(key)
        .post('/activities/batch')
        .send({ activities: [{ contact: { email: 'n1@example.com' }, name: 'x', id: 'same' }, { contact: { email: 'n1@example.com' }, name: 'x', id: 'same', properties: { a: 1 } }] });
      expect(res.status, res.text).to.equal(409);
      expect(res.body.code).to.equal('activity_conflict');
      expect(res.body.details[0].path).to.equal('activities.1.id');
      expect(res.body.details[0].message).to.contain('activities.0 has this id');
      expect(await written(accountId)).to.deep.equal({ activities: 0, contacts: 0, events: 0 });
    });

    it('accepts 500 activities in a handful of statements, contacts created set-based', async () => {
      const { key, accountId } = await buildTenant();
      const known = await buildContact(accountId);
      const activities = Array.from({ length: 500 }, (_, i) =>
        i % 5 === 0
          ? { contact: { id: known.id }, name: 'page_viewed', id: `view-${i}`, properties: { path: `/p/${i}` } }
          : { contact: { email: `bulk-${i % 100}@example.com` }, name: 'page_viewed', id: `view-${i}`, properties: { path: `/p/${i}`, tags: ['a', 'b'] } },
      );
      const { result: res, queries } = await captureQueries(() => rest(key).post('/activities/batch').send({ activities }).then((r) => r));
      expect(res.status, res.text.slice(0, 500)).to.equal(202);
      expect(res.body.summary).to.deep.equal({ total: 500, accepted: 500, duplicates: 0 });
      expect(res.body.activities.map((a: { id: string }) => a.id)).to.deep.equal(activities.map((a) => a.id));
      expect(await count('activities', accountId)).to.equal(500);
      expect(await count('contacts', accountId)).to.equal(81);
      const activityStatements = queries.filter((sql) => /activities/i.test(sql));
      expect(activityStatements, activityStatements.join('\n')).to.have.length(2);
      // Authentication, the transaction, the contacts' lock and upsert, the events: a bound, not one per item.
      expect(queries.length, queries.join('\n')).to.be.at.most(20);
    });

    it('stores each id once when overlapping batches run concurrently', async () => {
      const { key, accountId } = await buildTenant();
      const batch = (offset: number) =>
        Array.from({ length: 50 }, (_, i) => ({ contact: { email: `c-${(i + offset) % 30}@example.com` }, name: 'tick', id: `t-${(i + offset) % 80}` }));
      const answers = await Promise.all([0, 10, 20, 30, 0, 10].map((offset) => rest(key).post('/activities/batch').send({ activities: batch(offset) })));
      expect(answers.map((res) => res.status)).to.deep.equal(Array(6).fill(202));
      const ids = new Set([0, 10, 20, 30].flatMap((offset) => batch(offset).map((a) => a.id)));
      expect(await count('activities', accountId)).to.equal(ids.size);
      const accepted = answers.reduce((sum, res) => sum + res.body.summary.accepted, 0);
      expect(accepted).to.equal(ids.size);
    });
  });

  describe('GET /contacts/{id}/activities', () => {
    it('lists the contact\'s activities newest first by occurredAt, ties by id, page by page', async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId);
      const other = await buildContact(accountId);
      const at = (hoursAgo: number) => new Date(nowMs - hoursAgo * HOUR).toISOString();
      const posted = [
        { id: 'a', occurredAt: at(5) },
        { id: 'b', occurredAt: at(1) },
        { id: 'c', occurredAt: at(3) },
        { id: 'd', occurredAt: at(3) },
        { id: 'e', occurredAt: at(10) },
      ];
      const res = await rest(key)
        .post('/activities/batch')
        .send({ activities: [...posted.map((p) => ({ contact: { id: contact.id }, name: 'seen', properties: { p: p.id }, ...p })), { contact: { id: other.id }, name: 'seen', id: 'x' }] });
      expect(res.status, res.text).to.equal(202);

      const first = await rest(key).get(`/contacts/${contact.id}/activities?limit=2`);
      expect(first.status, first.text).to.equal(200);
      expect(first.body.activities).to.deep.equal([
        { id: 'b', name: 'seen', properties: { p: 'b' }, occurredAt: at(1), receivedAt: clock().toISOString() },
        { id: 'd', name: 'seen', properties: { p: 'd' }, occurredAt: at(3), receivedAt: clock().toISOString() },
      ]);
      const second = await rest(key).get(`/contacts/${contact.id}/activities?limit=2&cursor=${first.body.nextCursor}`);
      expect(second.body.activities.map((a: { id: string }) => a.id)).to.deep.equal(['c', 'a']);
      const third = await rest(key).get(`/contacts/${contact.id}/activities?limit=2&cursor=${second.body.nextCursor}`);
      expect(third.body).to.deep.equal({ activities: [{ id: 'e', name: 'seen', properties: { p: 'e' }, occurredAt: at(10), receivedAt: clock().toISOString() }], nextCursor: null });
      const all = await rest(key).get(`/contacts/${contact.id}/activities`);
      expect(all.body.activities).to.have.length(5);
    });

    it('answers 404 for an unknown contact, 400 for a bad limit or a cursor of another list', async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId);
      const other = await buildContact(accountId);
      expect((await rest(key).get('/contacts/0193a1c4-6b1e-7cc2-9a53-2f1f0b6a0c11/activities')).status).to.equal(404);
      for (const limit of ['0', '101', 'x']) {
        const res = await rest(key).get(`/contacts/${contact.id}/activities?limit=${limit}`);
        expect(res.status, limit).to.equal(400);
        expect(res.body.details[0].path).to.equal('limit');
      }
      await rest(key).post('/activities/batch').send({ activities: [1, 2].map((i) => ({ contact: { id: other.id }, name: 'x', id: `o${i}` })) });
      const page = await rest(key).get(`/contacts/${other.id}/activities?limit=1`);
      const res = await rest(key).get(`/contacts/${contact.id}/activities?cursor=${page.body.nextCursor}`);
      expect(res.status).to.equal(400);
      expect(res.body.details[0].path).to.equal('cursor');
    });

    it('loses a contact\'s activities with the contact', async () => {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId);
      await rest(key).post('/activities').send({ contact: { id: contact.id }, name: 'x' });
      const res = await request(activitiesApp()).delete(`/api/v1/contacts/${contact.id}`).set('x-api-key', key);
      expect(res.status).to.equal(204);
      expect(await count('activities', accountId)).to.equal(0);
    });
  });
});
