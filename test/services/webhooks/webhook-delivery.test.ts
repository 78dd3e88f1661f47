import { expect } from 'chai';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { Webhook } from 'standardwebhooks';
import { select } from '../../../src/db/sql/statements';
import { withTransaction } from '../../../src/db/sql/transaction';
import { insertEvents } from '../../../src/services/events/record-events';
import { isSpecialAddress } from '../../../src/services/webhooks/address-policy';
import { WebhookDispatcher, type DispatcherOptions } from '../../../src/services/webhooks/dispatcher';
import { createWebhook, listDeliveryAttempts, rotateWebhookSecret, sendTestEvent, updateWebhook } from '../../../src/services/webhooks/endpoints';
import { baseRetryDelayMs, DISABLE_AFTER_MS } from '../../../src/services/webhooks/retry-schedule';
import type { WebhookSettings } from '../../../src/services/webhooks/webhook-settings';
import { silentLogger } from '../../support/app';
import { testDb } from '../../support/db';
import { buildAccount } from '../../support/factories';
import { manualClock, startReceiver, type Received } from '../../support/webhook-receiver';

const receivers: Array<{ close: () => Promise<void> }> = [];
const dispatchers: WebhookDispatcher[] = [];

async function receiver(respond?: Parameters<typeof startReceiver>[0]) {
  const started = await startReceiver(respond);
  receivers.push(started);
  return started;
}

function dispatcher(settings: WebhookSettings, options: Partial<DispatcherOptions> = {}) {
  // random 0.5: no jitter, so the schedule can be read exactly.
  const made = new WebhookDispatcher(testDb(), { settings, logger: silentLogger, random: () => 0.5, pollMs: 20, ...options });
  dispatchers.push(made);
  return made;
}

async function record(accountId: string, events: Array<{ type: string; data: unknown }>) {
  return withTransaction(testDb(), (transaction) => insertEvents(testDb(), accountId, events, transaction));
}

function contactEvent(contactId: string, n = 0) {
  return { type: 'contact.updated', data: { contact: { id: contactId, email: `c${n}@example.com` }, changedFields: ['firstName'] } };
}

async function waitFor(check: () => boolean, ms = 5_000) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function header(request: Received, name: string): string {
  return String(request.headers[name]);
}

const realClock = (): WebhookSettings => ({ allowInsecure: true, now: () => new Date() });

describe('webhook delivery', () => {
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.stop(100)));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  it('POSTs the event with Standard Webhooks headers that standardwebhooks verifies', async () => {
    const settings = realClock();
    const account = await buildAccount();
    const hook = await receiver();
    const { secret } = await createWebhook(testDb(), { accountId: account.id, url: hook.url }, settings);
    const [event] = await record(account.id, [contactEvent('c-1')]);
    await dispatcher(settings).runOnce();

    expect(hook.received).to.have.length(1);
    const [got] = hook.received;
    const verified = new Webhook(secret).verify(got!.body, got!.headers as Record<string, string>) as Record<string, unknown>;
    expect(verified).to.deep.equal({
      id: event!.id,
      type: 'contact.updated',
      createdAt: event!.createdAt.toISOString(),
      accountId: account.id,
      data: { contact: { id: 'c-1', email: 'c0@example.com' }, changedFields: ['firstName'] },
    });
    expect(header(got!, 'webhook-id')).to.equal(event!.id);
    expect(header(got!, 'content-type')).to.equal('application/json');
    expect(() => new Webhook(`whsec_${Buffer.from('wrong key').toString('base64')}`).verify(got!.body, got!.headers as Record<string, string>)).to.throw();
  });

  it('sends only subscribed types, and nothing committed before the endpoint existed', async () => {
    const settings = realClock();
    const account = await buildAccount();
    const hook = await receiver();
    await record(account.id, [contactEvent('before')]);
    await createWebhook(testDb(), { accountId: account.id, url: hook.url, events: ['run.created'] }, settings);
    await record(account.id, [contactEvent('c-2'), { type: 'run.created', data: { run: { id: 'r-1', contactId: 'c-2' } } }]);
    await dispatcher(settings).runOnce();
    expect(hook.received.map((r) => JSON.parse(r.body).type)).to.deep.equal(['run.created']);
  });

  it('signs with both secrets for 24 h after a rotation, then with the new one only', async () => {
    const clock = manualClock(new Date());
    const settings = { allowInsecure: true, now: clock.now };
    const account = await buildAccount();
    const hook = await receiver();
    const { webhook, secret: oldSecret } = await createWebhook(testDb(), { accountId: account.id, url: hook.url }, settings);
    const { secret: newSecret } = await rotateWebhookSecret(testDb(), { accountId: account.id, id: webhook.id }, settings);
    await record(account.id, [contactEvent('c-3')]);
    const run = dispatcher(settings);
    await run.runOnce();
    const [first] = hook.received;
    expect(header(first!, 'webhook-signature').split(' ')).to.have.length(2);
    for (const secret of [oldSecret, newSecret]) {
      expect(() => new Webhook(secret).verify(first!.body, first!.headers as Record<string, string>)).not.to.throw();
    }

    clock.advance(24 * 3_600_000 + 1_000);
    await record(account.id, [contactEvent('c-4')]);
    await run.runOnce();
    const second = hook.received[1]!;
    const signatures = header(second, 'webhook-signature').split(' ');
    expect(signatures).to.have.length(1);
    const timestamp = new Date(Number(header(second, 'webhook-timestamp')) * 1000);
    // The library's verify checks the timestamp against the real clock; sign() recomputes the
    // signature for the moved clock's timestamp instead.
    expect(signatures[0]).to.equal(new Webhook(newSecret).sign(header(second, 'webhook-id'), timestamp, second.body));
    expect(signatures[0]).not.to.equal(new Webhook(oldSecret).sign(header(second, 'webhook-id'), timestamp, second.body));
  });

  it('retries a failing receiver on the schedule: 5 s, 30 s, 2 min, 10 min, 1 h, 4 h, then every 12 h', async () => {
    const clock = manualClock();
    const settings = { allowInsecure: true, now: clock.now };
    const account = await buildAccount();
    const hook = await receiver(() => 500);
    const { webhook } = await createWebhook(testDb(), { accountId: account.id, url: hook.url }, settings);
    await record(account.id, [contactEvent('c-5')]);
    const run = dispatcher(settings);
    const gaps: number[] = [];
    let last = clock.now().getTime();
    await run.runOnce();
    for (let attempt = 1; attempt <= 8; attempt += 1) {
      const delay = baseRetryDelayMs(attempt);
      clock.advance(delay - 1_000);
      await run.runOnce();
      expect(hook.received, `not before ${delay} ms`).to.have.length(attempt);
      clock.advance(1_000);
      await run.runOnce();
      expect(hook.received).to.have.length(attempt + 1);
      gaps.push(clock.now().getTime() - last);
      last = clock.now().getTime();
    }
    expect(gaps).to.deep.equal([5_000, 30_000, 120_000, 600_000, 3_600_000, 14_400_000, 43_200_000, 43_200_000]);
    const { attempts } = await listDeliveryAttempts(testDb(), { accountId: account.id, id: webhook.id, limit: 3 }, settings);
    expect(attempts.map((a) => a.attempt)).to.deep.equal([9, 8, 7]);
    expect(attempts[0]).to.include({ responseStatus: 500, error: null, succeeded: false });
    expect(Date.parse(attempts[0]!.nextAttemptAt!) - Date.parse(attempts[0]!.createdAt)).to.equal(43_200_000);
  });

  it('keeps the jitter within 10 % of each step', async () => {
    const clock = manualClock();
    const settings = { allowInsecure: true, now: clock.now };
    const account = await buildAccount();
    const hook = await receiver(() => 503);
    const { webhook } = await createWebhook(testDb(), { accountId: account.id, url: hook.url }, settings);
    await record(account.id, [contactEvent('a'), { type: 'run.created', data: { run: { id: 'r', contactId: 'b' } } }]);
    await dispatcher(settings, { random: Math.random }).runOnce();
    const { attempts } = await listDeliveryAttempts(testDb(), { accountId: account.id, id: webhook.id, limit: 10 }, settings);
    expect(attempts).to.have.length(2);
    for (const attempt of attempts) {
      expect(Date.parse(attempt.nextAttemptAt!) - Date.parse(attempt.createdAt)).to.be.within(4_500, 5_500);
    }
  });

  it('delivers on the fourth try to a receiver that answers 500 three times, and lists each attempt', async () => {
    const clock = manualClock();
    const settings = { allowInsecure: true, now: clock.now };
    const account = await buildAccount();
    const hook = await receiver((_, index) => (index < 3 ? 500 : 200));
    const { webhook } = await createWebhook(testDb(), { accountId: account.id, url: hook.url }, settings);
    const [event] = await record(account.id, [contactEvent('c-6')]);
    const run = dispatcher(settings);
    for (let i = 0; i < 6; i += 1) {
      await run.runOnce();
      clock.advance(3_600_000);
    }
    expect(hook.received).to.have.length(4);
    expect(new Set(hook.received.map((r) => header(r, 'webhook-id')))).to.deep.equal(new Set([event!.id]));
    const page1 = await listDeliveryAttempts(testDb(), { accountId: account.id, id: webhook.id, limit: 3 }, settings);
    const page2 = await listDeliveryAttempts(testDb(), { accountId: account.id, id: webhook.id, limit: 3, cursor: page1.nextCursor! }, settings);
    const all = [...page1.attempts, ...page2.attempts];
    expect(all.map((a) => [a.attempt, a.responseStatus, a.succeeded])).to.deep.equal([
      [4, 200, true],
      [3, 500, false],
      [2, 500, false],
      [1, 500, false],
    ]);
    expect(all[0]!.nextAttemptAt).to.equal(null);
    expect(page2.nextCursor).to.equal(null);
    expect(all.every((a) => a.eventId === event!.id && a.durationMs >= 0)).to.equal(true);
  });

  it('keeps one contact\'s events in order when an earlier one is being retried', async () => {
    const clock = manualClock();
    const settings = { allowInsecure: true, now: clock.now };
    const account = await buildAccount();
    const hook = await receiver((_, index) => (index === 0 ? 500 : 204));
    await createWebhook(testDb(), { accountId: account.id, url: hook.url }, settings);
    const events = await record(account.id, [contactEvent('same', 1), contactEvent('same', 2), contactEvent('other', 3)]);
    const run = dispatcher(settings);
    await run.runOnce();
    // The first failed; the second (same contact) waits; the other contact's goes.
    expect(hook.received.map((r) => header(r, 'webhook-id'))).to.deep.equal([events[0]!.id, events[2]!.id]);
    clock.advance(5_000);
    await run.runOnce();
    await run.runOnce();
    expect(hook.received.map((r) => header(r, 'webhook-id')).slice(2)).to.deep.equal([events[0]!.id, events[1]!.id]);
  });

  it('sends a webhook.test event to the one endpoint asked', async () => {
    const settings = realClock();
    const account = await buildAccount();
    const a = await receiver();
    const b = await receiver();
    const { webhook } = await createWebhook(testDb(), { accountId: account.id, url: a.url, events: ['run.created'] }, settings);
    await createWebhook(testDb(), { accountId: account.id, url: b.url }, settings);
    const { eventId } = await sendTestEvent(testDb(), { accountId: account.id, id: webhook.id });
    await dispatcher(settings).runOnce();
    expect(a.received.map((r) => JSON.parse(r.body))).to.deep.include.members([
      { id: eventId, type: 'webhook.test', accountId: account.id, createdAt: JSON.parse(a.received[0]!.body).createdAt, data: { webhookId: webhook.id } },
    ]);
    expect(b.received).to.have.length(0);
  });

  it('refuses at delivery time a loopback address, and a name that resolves to one', async () => {
    const account = await buildAccount();
    const hook = await receiver();
    const { webhook } = await createWebhook(testDb(), { accountId: account.id, url: hook.url }, realClock());
    await record(account.id, [contactEvent('c-7')]);
    const secure = { allowInsecure: false, now: () => new Date() };
    await dispatcher(secure).runOnce();
    let { attempts } = await listDeliveryAttempts(testDb(), { accountId: account.id, id: webhook.id, limit: 10 }, secure);
    expect(attempts[0]!.error).to.match(/^refused/);
    expect(hook.received).to.have.length(0);

    const name = hostname();
    const resolved = await lookup(name).catch(() => null);
    if (!resolved || !isSpecialAddress(resolved.address)) return;
    // The name passes the create-time check (names are not resolved then)...
    const named = await createWebhook(testDb(), { accountId: account.id, url: `https://${name}:${new URL(hook.url).port}/hook` }, secure);
    await record(account.id, [contactEvent('c-8')]);
    await dispatcher(secure).runOnce();
    ({ attempts } = await listDeliveryAttempts(testDb(), { accountId: account.id, id: named.webhook.id, limit: 10 }, secure));
    // ...and is refused once it resolves to a loopback address.
    expect(attempts[0]!.error).to.match(/^refused: .* resolves to a refused address/);
  });

  it('does not let a hanging receiver delay another endpoint', async () => {
    const settings = realClock();
    const account = await buildAccount();
    const hanging = await receiver(() => 'hang');
    const fine = await receiver();
    await createWebhook(testDb(), { accountId: account.id, url: hanging.url }, settings);
    await createWebhook(testDb(), { accountId: account.id, url: fine.url }, settings);
    const run = dispatcher(settings, { perEndpoint: 2 });
    run.start();
    const startedAt = Date.now();
    for (let i = 0; i < 6; i += 1) await record(account.id, [contactEvent(`h-${i}`, i)]);
    await waitFor(() => fine.received.length === 6);
    expect(Date.now() - startedAt).to.be.below(3_000);
    // The hanging endpoint holds at most its own two slots.
    expect(hanging.received.length).to.equal(2);
    await run.stop(50);
    const leased = await select<{ n: number }>(testDb(), 'SELECT COUNT(*) AS n FROM webhook_deliveries WHERE lease_until IS NOT NULL', []);
    expect(Number(leased[0]!.n)).to.equal(0);
  });

  it('redelivers after a dispatcher dies mid-delivery, once its lease expires', async () => {
    const clock = manualClock(new Date());
    const settings = { allowInsecure: true, now: clock.now };
    const account = await buildAccount();
    let answer: 'hang' | 204 = 'hang';
    const hook = await receiver(() => answer);
    await createWebhook(testDb(), { accountId: account.id, url: hook.url }, settings);
    const [event] = await record(account.id, [contactEvent('c-9')]);
    // The first dispatcher claims and never finishes (as if killed).
    const dead = new WebhookDispatcher(testDb(), { settings, logger: silentLogger, leaseMs: 60_000 });
    void dead.runOnce();
    await waitFor(() => hook.received.length === 1);
    answer = 204;
    const other = dispatcher(settings);
    expect(await other.runOnce()).to.equal(0);
    clock.advance(60_001);
    await other.runOnce();
    expect(hook.received.map((r) => header(r, 'webhook-id'))).to.deep.equal([event!.id, event!.id]);
    dispatchers.push(dead);
  });

  it('disables an endpoint failing for 3 days and records webhook.disabled', async () => {
    const clock = manualClock();
    const settings = { allowInsecure: true, now: clock.now };
    const account = await buildAccount();
    const hook = await receiver(() => 500);
    const { webhook } = await createWebhook(testDb(), { accountId: account.id, url: hook.url }, settings);
    await record(account.id, [contactEvent('c-10')]);
    const run = dispatcher(settings);
    const start = clock.now().getTime();
    let enabled = true;
    while (enabled) {
      await run.runOnce();
      const [row] = await select<{ enabled: unknown }>(testDb(), 'SELECT enabled FROM webhook_endpoints WHERE id = ?', [webhook.id]);
      enabled = Boolean(Number(row!.enabled));
      if (enabled) clock.advance(3_600_000);
      expect(clock.now().getTime() - start).to.be.below(DISABLE_AFTER_MS + 13 * 3_600_000);
    }
    expect(clock.now().getTime() - start).to.be.at.least(DISABLE_AFTER_MS);
    const disabled = await select<{ type: string; data: string }>(testDb(), "SELECT type, data FROM events WHERE type = 'webhook.disabled'", []);
    expect(disabled).to.have.length(1);
    expect(JSON.parse(disabled[0]!.data).webhook).to.deep.equal({ id: webhook.id, url: hook.url });
    // No more attempts while disabled; re-enabling sends what queued.
    const before = hook.received.length;
    clock.advance(13 * 3_600_000);
    await run.runOnce();
    expect(hook.received.length).to.equal(before);
    await updateWebhook(testDb(), { accountId: account.id, id: webhook.id, enabled: true }, settings);
    await run.runOnce();
    expect(hook.received.length).to.be.above(before);
  });
});
