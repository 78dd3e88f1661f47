import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { execute, select } from '../../../src/db/sql/statements';
import { toDate } from '../../../src/db/sql/rows';
import { testDb } from '../../support/db';
import { engineAt, enrolledRun } from './support';

// Email and WhatsApp steps queue an outbox send and a `queued` message with their begin; the
// outbound layer sends them. What the sender decides without a provider is tested here (capture,
// skips); sending through a real SMTP server is test/services/engine/email-smtp.test.ts.

const EMAIL = { id: 'mail', type: 'email', subject: 'Hi {{ contact.firstName }}', html: '<p>Hi {{ contact.firstName }}</p>' };
const WHATSAPP = { id: 'chat', type: 'whatsapp', template: { name: 'welcome', language: { code: 'en' } } };

async function messagesOf(runId: string) {
  return select<{ status: string; error: string | null; channel: string; to_address: string; subject: string | null; message_key: string; outbox_id: string | null }>(
    testDb(),
    'SELECT status, error, channel, to_address, subject, message_key, outbox_id FROM messages WHERE run_id = ? ORDER BY created_at',
    [runId],
  );
}

describe('sequence engine: email and whatsapp steps', () => {
  it('queues the send and a queued message in the step\'s transaction, with one shared key', async () => {
    const run = await enrolledRun([EMAIL], {}, { firstName: 'Ada' });
    const { engine } = engineAt();
    await engine.runUntilIdle();
    const [outbox] = await select<{ id: string; channel: string; idempotency_id: string }>(testDb(), 'SELECT id, channel, idempotency_id FROM outbox WHERE run_id = ?', [run.runId]);
    expect(outbox).to.include({ channel: 'email', idempotency_id: `run_${run.runId}_mail_1` });
    const [message] = await messagesOf(run.runId);
    expect(message).to.include({ channel: 'email', message_key: `run_${run.runId}_mail_1`, outbox_id: outbox!.id, to_address: run.contact.email });
  });

  it('with no SMTP server, captures the email as a complete .eml file, the message `captured`, and the run goes on', async () => {
    const run = await enrolledRun([EMAIL, { id: 'after', type: 'tag', add: ['after'] }], {}, { firstName: 'Ada' });
    const { engine, messages } = engineAt();
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    const [message] = await messagesOf(run.runId);
    expect(message).to.include({ status: 'captured', subject: 'Hi Ada', error: null });
    const files = readdirSync(messages.outboxDir);
    expect(files).to.deep.equal([`run_${run.runId}_mail_1.eml`]);
    // Unfolded: a long header continues on the next line, after a space (RFC 5322).
    const eml = readFileSync(path.join(messages.outboxDir, files[0]!), 'utf8').replace(/\r?\n[ \t]+/g, ' ');
    expect(eml).to.match(/^Subject: Hi Ada$/m);
    expect(eml).to.match(new RegExp(`^Message-ID: <run_${run.runId}_mail_1@`, 'm'));
    expect(eml).to.match(/^List-Unsubscribe: <https:\/\/svc\.example\.com\/u\/[^>]+>$/m);
    expect(eml).to.match(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    expect(eml).to.contain('Hi Ada');
  });

  it('skips an email step for a contact unsubscribed, read when the message goes, with its reason, and the run goes on', async () => {
    const run = await enrolledRun([EMAIL, { id: 'after', type: 'tag', add: ['after'] }]);
    const { engine, messages } = engineAt();
    // Behind the API's back (no exit rule, no event): only the sender's own read can see it.
    await execute(testDb(), "UPDATE contacts SET email_subscription_status = 'unsubscribed' WHERE id = ?", [run.contact.id]);
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail.status).to.equal('completed');
    const mail = detail.executions.find((execution: { stepId: string }) => execution.stepId === 'mail');
    expect(mail).to.include({ status: 'skipped', reason: 'unsubscribed' });
    const [message] = await messagesOf(run.runId);
    expect(message).to.include({ status: 'skipped', error: 'unsubscribed' });
    expect(readdirSync(messages.outboxDir)).to.deep.equal([]);
    const [contact] = await select<{ tags: unknown }>(testDb(), 'SELECT tags FROM contacts WHERE id = ?', [run.contact.id]);
    expect(String(contact!.tags)).to.contain('after');
  });

  it('captures a whatsapp step of an account with no WhatsApp channel, its message `captured` with the E.164 address (the channel itself: whatsapp-steps.test.ts)', async () => {
    const run = await enrolledRun([WHATSAPP, { id: 'after', type: 'tag', add: ['after'] }], {}, { phone: '+44 7700 900123' });
    const { engine, messages } = engineAt();
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'completed' });
    const [message] = await messagesOf(run.runId);
    expect(message).to.include({ channel: 'whatsapp', status: 'captured', error: null, to_address: '447700900123' });
    expect(readdirSync(messages.outboxDir)).to.deep.equal([`run_${run.runId}_chat_1.whatsapp.json`]);
  });

  it('tries a message over its render time limit again on the retry schedule (a busy machine stretches wall-clock time), and fails one over its memory limit at once', async () => {
    const slow = await enrolledRun([{ ...EMAIL, text: '{% for i in (1..2000) %}{% for j in (1..2000) %}{{ j }}{% endfor %}{% endfor %}' }]);
    const big = await enrolledRun([{ ...EMAIL, html: '{% for i in (1..100000000) %}{{ i }}{% endfor %}' }]);
    const { engine } = engineAt();
    await engine.runUntilIdle();
    const slowRun = await slow.timeline();
    expect(slowRun.status).to.equal('running');
    expect(slowRun.waitingFor).to.equal('retry');
    expect(slowRun.executions.at(-1)).to.deep.include({ status: 'failed' });
    expect(slowRun.executions.at(-1)!.reason).to.match(/text could not be rendered: .*template render limit exceeded/);
    expect((await messagesOf(slow.runId))[0]).to.include({ status: 'queued' });
    const bigRun = await big.timeline();
    expect(bigRun.status).to.equal('failed');
    expect((await messagesOf(big.runId))[0]).to.include({ status: 'failed' });
  });

  it('holds them outside the sending window, as it holds every step that acts', async () => {
    const start = Date.parse('2027-03-27T20:00:00.000Z');
    const run = await enrolledRun([EMAIL], { sendingWindow: { timeZone: 'UTC', from: '09:00', to: '17:00' } });
    const { engine } = engineAt(start);
    await engine.runOnce();
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'pending', waitingFor: 'window', currentStepId: 'mail' });
    const stored = await select<{ due_at: unknown }>(testDb(), 'SELECT due_at FROM sequence_runs WHERE id = ?', [run.runId]);
    expect(toDate(stored[0]!.due_at).toISOString()).to.equal('2027-03-28T09:00:00.000Z');
    expect(await messagesOf(run.runId)).to.deep.equal([]);
  });

  it('checks exit rules before them: a contact that meets one is cancelled at the step, not failed', async () => {
    const run = await enrolledRun([WHATSAPP], { exitWhen: [{ tag: 'bought' }] });
    await execute(testDb(), 'UPDATE contacts SET tags = ? WHERE id = ?', [JSON.stringify(['bought']), run.contact.id]);
    const { engine } = engineAt();
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'cancelled', currentStepId: 'chat' });
    expect(detail.reason).to.contain('bought');
  });
});
