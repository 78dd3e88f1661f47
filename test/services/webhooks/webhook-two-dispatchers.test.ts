import { expect } from 'chai';
import { withTransaction } from '../../../src/db/sql/transaction';
import { insertEvents } from '../../../src/services/events/record-events';
import { WebhookDispatcher } from '../../../src/services/webhooks/dispatcher';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { silentLogger } from '../../support/app';
import { testDb } from '../../support/db';
import { buildAccount } from '../../support/factories';
import { startReceiver } from '../../support/webhook-receiver';

describe('two dispatchers on one database', function () {
  this.timeout(60_000);

  it('deliver 1,000 events, every one, none twice at once', async () => {
    const settings = { allowInsecure: true, now: () => new Date() };
    const account = await buildAccount();
    const inFlight = new Set<string>();
    const delivered = new Map<string, number>();
    let overlapping = 0;
    const receiver = await startReceiver(async (request) => {
      const id = String(request.headers['webhook-id']);
      if (inFlight.has(id)) overlapping += 1;
      inFlight.add(id);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      inFlight.delete(id);
      delivered.set(id, (delivered.get(id) ?? 0) + 1);
      return 204;
    });
    const dispatchers = [1, 2].map(
      () => new WebhookDispatcher(testDb(), { settings, logger: silentLogger, pollMs: 5, perEndpoint: 16, concurrency: 16 }),
    );
    try {
      await createWebhook(testDb(), { accountId: account.id, url: receiver.url }, settings);
      const ids: string[] = [];
      for (let batch = 0; batch < 10; batch += 1) {
        const events = Array.from({ length: 100 }, (_, i) => ({
          type: 'run.created',
          data: { run: { id: `r-${batch}-${i}`, contactId: `c-${(batch * 100 + i) % 250}` } },
        }));
        ids.push(...(await withTransaction(testDb(), (t) => insertEvents(testDb(), account.id, events, t))).map((e) => e.id));
      }
      dispatchers.forEach((d) => d.start());
      const until = Date.now() + 50_000;
      while (delivered.size < ids.length && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(delivered.size).to.equal(1_000);
      expect(new Set(ids)).to.deep.equal(new Set(delivered.keys()));
      expect(overlapping).to.equal(0);
      expect([...delivered.values()].filter((n) => n > 1)).to.deep.equal([]);
    } finally {
      await Promise.all(dispatchers.map((d) => d.stop(1_000)));
      await receiver.close();
    }
  });
});
