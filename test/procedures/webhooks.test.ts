import { expect } from 'chai';
import { createCaller, createCallerContext } from '../../src/routers/caller';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';

function callerFor(key: string, allowInsecure = false) {
  return createCaller(createCallerContext({ db: testDb(), apiKey: key, webhooks: { allowInsecure, now: () => new Date() } }));
}

describe('webhooks procedures (tRPC)', () => {
  it('creates, lists, updates and deletes through the webhooks router', async () => {
    const { key } = await buildTenant();
    const trpc = callerFor(key);
    const { webhook, secret } = await trpc.webhooks.create({ url: 'https://hooks.example.com/x', events: ['run.status_changed'] });
    expect(secret).to.match(/^whsec_/);
    expect((await trpc.webhooks.list({})).webhooks.map((w) => w.id)).to.deep.equal([webhook.id]);
    expect((await trpc.webhooks.update({ id: webhook.id, events: null })).webhook.events).to.equal(null);
    await trpc.webhooks.delete({ id: webhook.id });
    await trpc.webhooks.get({ id: webhook.id }).then(
      () => expect.fail('expected NOT_FOUND'),
      (error: { code?: string }) => expect(error.code).to.equal('NOT_FOUND'),
    );
  });

  it('refuses a loopback URL unless the insecure setting is on', async () => {
    const { key } = await buildTenant();
    await callerFor(key).webhooks.create({ url: 'http://127.0.0.1:8080/x' }).then(
      () => expect.fail('expected BAD_REQUEST'),
      (error: { code?: string }) => expect(error.code).to.equal('BAD_REQUEST'),
    );
    const { webhook } = await callerFor(key, true).webhooks.create({ url: 'http://127.0.0.1:8080/x' });
    expect(webhook.url).to.equal('http://127.0.0.1:8080/x');
  });
});
