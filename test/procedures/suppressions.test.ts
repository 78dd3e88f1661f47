import { expect } from 'chai';
import request from 'supertest';
import { select } from '../../src/db/sql/statements';
import { createCaller, createCallerContext } from '../../src/routers/caller';
import { caller, testApp } from '../support/app';
import { channelSettings } from '../support/channels';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { badRequest, rejectedWith } from '../support/trpc';

// suppressions.* through tRPC (createCaller, and /trpc over HTTP): the same procedures as REST,
// the same checks and errors.

const NOT_FOUND = { error: 'Suppression not found', code: 'not_found' };

describe('suppressions procedures', () => {
  it('adds, lists, gets and removes, with the key as source', async () => {
    const { key, keyId } = await buildTenant();
    const added = await caller(key).suppressions.add({ suppressions: [{ channel: 'email', address: 'Ada@Example.com' }, { channel: 'whatsapp', address: '+44 7700 900123', reason: 'invalid' }] });
    expect(added).to.deep.equal({ summary: { total: 2, added: 2, existing: 0 } });
    const { suppressions, nextCursor } = await caller(key).suppressions.list({ channel: 'email' });
    expect(nextCursor).to.equal(null);
    expect(suppressions).to.have.length(1);
    expect(suppressions[0]).to.deep.include({ channel: 'email', address: 'ada@example.com', reason: 'manual', source: `api_key:${keyId}` });
    const { suppression } = await caller(key).suppressions.get({ channel: 'whatsapp', address: '+447700900123' });
    expect(suppression).to.deep.include({ address: '+447700900123', reason: 'invalid' });
    expect(await caller(key).suppressions.remove({ channel: 'whatsapp', address: '00447700900123' })).to.equal(undefined);
    await rejectedWith(caller(key).suppressions.get({ channel: 'whatsapp', address: '+447700900123' }), 'NOT_FOUND', NOT_FOUND);
    await rejectedWith(caller(key).suppressions.remove({ channel: 'whatsapp', address: '+447700900123' }), 'NOT_FOUND', NOT_FOUND);
  });

  it('refuses a bad item by its path and writes nothing', async () => {
    const { key, accountId } = await buildTenant();
    await badRequest(caller(key).suppressions.add({ suppressions: [{ channel: 'email', address: 'fine@example.com' }, { channel: 'email', address: 'nope' }] }), 'suppressions.1.address');
    await badRequest(caller(key).suppressions.add({ suppressions: [{ channel: 'fax' as never, address: 'a@example.com' }] }), 'suppressions.0.channel');
    await badRequest(caller(key).suppressions.add({ suppressions: [] }), 'suppressions');
    await badRequest(caller(key).suppressions.get({ channel: 'email', address: 'nope' }), 'address');
    await badRequest(caller(key).suppressions.list({ reason: 'bored' as never }), 'reason');
    expect(await select(testDb(), 'SELECT id FROM suppressions WHERE account_id = ?', [accountId])).to.deep.equal([]);
  });

  it('answers over /trpc as over REST', async () => {
    const { key } = await buildTenant();
    const add = await request(testApp())
      .post('/trpc/suppressions.add')
      .set('x-api-key', key)
      .send({ suppressions: [{ channel: 'email', address: 'rpc@example.com', reason: 'unsubscribe' }] });
    expect(add.status, JSON.stringify(add.body)).to.equal(200);
    expect(add.body.result.data).to.deep.equal({ summary: { total: 1, added: 1, existing: 0 } });
    const got = await request(testApp())
      .get(`/trpc/suppressions.get?input=${encodeURIComponent(JSON.stringify({ channel: 'email', address: 'RPC@example.com' }))}`)
      .set('x-api-key', key);
    expect(got.status).to.equal(200);
    expect(got.body.result.data.suppression).to.deep.include({ address: 'rpc@example.com', reason: 'unsubscribe' });
    const bad = await request(testApp())
      .post('/trpc/suppressions.add')
      .set('x-api-key', key)
      .send({ suppressions: [{ channel: 'email', address: 'bad' }] });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.data.details).to.deep.equal([{ path: 'suppressions.0.address', message: 'Invalid email address' }]);
  });

  it('says in a message step\'s preview that the contact\'s address is suppressed', async () => {
    const { key, accountId } = await buildTenant();
    const contact = await buildContact(accountId, { email: 'Ada@Example.com', phone: '+49 151 1285 5001' });
    const { sequence } = await caller(key).sequences.create({
      name: 'Preview',
      steps: [
        { id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi</p>' },
        { id: 'chat', type: 'whatsapp', template: { name: 'hello', language: { code: 'en' } } },
      ],
    } as never);
    const previewer = createCaller(createCallerContext({ db: testDb(), apiKey: key, channels: channelSettings() }));
    const skipOf = async (stepId: string) => (await previewer.sequences.preview({ id: sequence.id, stepId, contactId: contact.id })).preview.skipReason;
    expect([await skipOf('mail'), await skipOf('chat')]).to.deep.equal([null, null]);
    await caller(key).suppressions.add({ suppressions: [{ channel: 'email', address: 'ada@example.com' }, { channel: 'whatsapp', address: '+4915112855001' }] });
    expect([await skipOf('mail'), await skipOf('chat')]).to.deep.equal(['suppressed', 'suppressed']);
  });
});
