import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../../src/app';
import { select } from '../../../src/db/sql/statements';
import { withTransaction } from '../../../src/db/sql/transaction';
import { LogThrottle } from '../../../src/logging/log-throttle';
import { recordEvents } from '../../../src/services/events/record-events';
import { WebhookDispatcher } from '../../../src/services/webhooks/dispatcher';
import { createWebhook } from '../../../src/services/webhooks/endpoints';
import { testDb, withFailingStatements } from '../../support/db';
import { buildAccount, buildTenant } from '../../support/factories';
import { bufferLogger } from '../../support/log-buffer';
import { manualTimers } from '../../support/manual-timers';
import { passesDuringOutage, refused, until } from '../../support/outage';
import { startReceiver } from '../../support/webhook-receiver';

// The dispatcher while its database is down. Before: a pass every 250 ms, each one an error
// line with a stack (4 lines a second, 20 MB an hour). Now: passes back off (500 ms doubling
// to 15 s), the failures are logged at most once per cause per 10 s, and the first pass after
// the database is back delivers what waited. Time is the test's (manual timers).

const OUTAGE_MS = 60_000;


describe('webhook dispatcher while the database is down', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp(logThrottle?: (clock: () => number) => LogThrottle) {
    const clock = manualTimers();
    const log = bufferLogger('info');
    const settings = { allowInsecure: true, now: () => new Date(clock.now()) };
    const account = await buildAccount();
    const hook = await startReceiver();
    cleanups.push(() => hook.close());
    await createWebhook(testDb(), { accountId: account.id, url: hook.url }, settings);
    const [event] = await withTransaction(testDb(), (transaction) =>
      recordEvents(testDb(), account.id, [{ type: 'contact.updated', data: { contact: { id: 'c-1' }, changedFields: [] } }], transaction),
    );
    const throttle = logThrottle?.(clock.now);
    const dispatcher = new WebhookDispatcher(testDb(), { settings, logger: log.logger, timers: clock.timers, logThrottle: throttle });
    cleanups.push(() => dispatcher.stop(100));
    return { clock, log, hook, event: event!, dispatcher, throttle };
  }

  it('backs off to 15 s, logs one line per 10 s, and delivers once the database is back', async () => {
    const { clock, log, hook, event, dispatcher } = await setUp();
    const { passesAt, waits } = await passesDuringOutage(clock, () => dispatcher.start(), OUTAGE_MS);

    // 8 passes in 60 s, where a pass every 250 ms made 240.
    expect(passesAt).to.deep.equal([0, 500, 1_500, 3_500, 7_500, 15_500, 30_500, 45_500]);
    expect(waits).to.deep.equal([500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000, 15_000]);
    expect(hook.received).to.have.length(0);
    const failures = log.records().filter((r) => r.msg === 'webhook dispatcher pass failed');
    expect(failures.map((r) => [r.level, r.cause, r.failedPasses, r.retryInMs, r.suppressed])).to.deep.equal([
      ['error', 'database', 1, 500, undefined],
      // The passes at 0.5, 1.5, 3.5 and 7.5 s were within 10 s of the line at 0.
      ['error', 'database', 6, 15_000, 4],
      ['error', 'database', 7, 15_000, undefined],
      ['error', 'database', 8, 15_000, undefined],
    ]);
    expect(JSON.stringify(failures[0])).to.include('ECONNREFUSED');

    // The database is back: the next pass delivers, and the loop is on its own schedule again.
    clock.fire();
    await until(() => hook.received.length === 1);
    expect(hook.received[0]!.headers['webhook-id']).to.equal(event.id);
    await until(async () => {
      const [row] = await select<{ status: string }>(testDb(), 'SELECT status FROM webhook_deliveries WHERE event_id = ?', [event.id]);
      return row?.status === 'succeeded';
    });
    expect(await clock.nextWait()).to.be.at.most(250);
    const resumed = log.records().filter((r) => r.msg === 'webhook dispatcher resumed');
    expect(resumed.map((r) => [r.level, r.failedPasses])).to.deep.equal([['info', 8]]);
  });

  it('shares the throttle with requests: one database line per 10 s from the process, whichever met the outage', async () => {
    const { clock, log, dispatcher, throttle } = await setUp((now) => new LogThrottle(10_000, now));
    const { key } = await buildTenant();
    const app = createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000, authFailureLimitPerMinute: 1_000 },
      logger: log.logger,
      logThrottle: throttle,
    });
    const statuses: number[] = [];
    await withFailingStatements({ scope: 'all', failure: refused }, async () => {
      // A request meets the outage first...
      statuses.push((await request(app).get('/api/v1/contacts/by-email/a%40example.com').set('x-api-key', key)).status);
      // ...then the dispatcher's passes at 0, 0.5, 1.5, 3.5 and 7.5 s.
      dispatcher.start();
      for (let pass = 0; pass < 5; pass += 1) {
        await clock.nextWait();
        if (pass < 4) clock.fire();
      }
    });
    expect(statuses).to.deep.equal([503]);
    const lines = log.records().filter((r) => r.cause === 'database' && r.msg !== 'request completed');
    expect(lines.map((r) => r.msg)).to.deep.equal(['Database unavailable: answering 503']);
  });
});
