import { expect } from 'chai';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { select } from '../../../src/db/sql/statements';
import { putWhatsAppChannel } from '../../../src/services/channels/whatsapp-channel';
import { addSuppressionList } from '../../../src/services/suppressions/suppression-operations';
import { caller } from '../../support/app';
import { channelSettings } from '../../support/channels';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { startSmtpServer } from '../../support/smtp-server';
import { startGraphStandIn } from '../../support/whatsapp-graph';
import { engineAt } from './support';

// A message step to an address on the account's suppression list (docs/channels.md
// "Suppressions") is skipped with reason `suppressed`, decided by the sender when the message
// goes (one lookup for the batch), shown in the run's timeline and counted in the step's
// analytics; the run goes on, and the contact stays enrollable.

const EMAIL = { id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi</p>' };
const WHATSAPP = { id: 'chat', type: 'whatsapp', template: { name: 'welcome', language: { code: 'en_US' } } };
const AFTER = { id: 'after', type: 'tag', add: ['after'] };

async function messagesOf(accountId: string) {
  return select<{ contact_id: string; status: string; error: string | null }>(testDb(), 'SELECT contact_id, status, error FROM messages WHERE account_id = ?', [accountId]);
}

async function timelineOf(key: string, sequenceId: string, contactId: string) {
  const { runs } = await caller(key).sequences.runs({ id: sequenceId });
  const run = runs.find((r) => r.contactId === contactId)!;
  return (await caller(key).sequences.run({ id: sequenceId, runId: run.id })).run;
}

describe('sequence engine: suppressed addresses', () => {
  it('skips an email step to a suppressed address (stored normalized, the contact\'s written otherwise), sends to the others of the batch, and counts it by reason', async () => {
    const smtp = await startSmtpServer();
    try {
      const tenant = await buildTenant();
      const other = await buildTenant();
      const { sequence } = await caller(tenant.key).sequences.create({ name: 'Suppressed', status: 'active', steps: [EMAIL, AFTER] } as never);
      const suppressed = await buildContact(tenant.accountId, { email: 'Bounced.Ada@Example.com' });
      const fine = await buildContact(tenant.accountId, { email: 'bob@example.com' });
      await addSuppressionList(testDb(), { accountId: tenant.accountId, suppressions: [{ channel: 'email', address: 'bounced.ada@example.com', reason: 'hard_bounce' }], source: 'cli' });
      // Another account's list, and the same address on the other channel, change nothing here.
      await addSuppressionList(testDb(), { accountId: other.accountId, suppressions: [{ channel: 'email', address: 'bob@example.com' }], source: 'cli' });
      // Still enrollable: the step decides.
      const enrolled = await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [suppressed.id, fine.id] });
      expect(enrolled.summary).to.deep.include({ processed: 2, successful: 2 });
      const { engine } = engineAt(Date.now() + 1, { messages: { settings: channelSettings({ smtpUrl: smtp.url, emailFrom: 'Shop <shop@example.com>' }), outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
      await engine.runUntilIdle();

      expect(smtp.received.map((mail) => mail.envelope.to)).to.deep.equal([['bob@example.com']]);
      const messages = await messagesOf(tenant.accountId);
      expect(messages.find((m) => m.contact_id === suppressed.id)).to.include({ status: 'skipped', error: 'suppressed' });
      expect(messages.find((m) => m.contact_id === fine.id)).to.include({ status: 'sent' });
      const timeline = await timelineOf(tenant.key, sequence.id, suppressed.id);
      expect(timeline.status).to.equal('completed');
      expect(timeline.executions.find((e: { stepId: string }) => e.stepId === 'mail')).to.include({ status: 'skipped', reason: 'suppressed' });
      expect(timeline.executions.find((e: { stepId: string }) => e.stepId === 'after')).to.include({ status: 'succeeded' });
      const { stats } = await caller(tenant.key).sequences.stats({ id: sequence.id });
      expect(stats.steps.find((s) => s.stepId === 'mail')).to.deep.include({ reached: 2, completed: 1, skipped: { suppressed: 1 }, failed: 0 });
    } finally {
      await smtp.close();
    }
  });

  it('keeps a suppression when the contact is deleted and created again: keyed by the address', async () => {
    const tenant = await buildTenant();
    const first = await buildContact(tenant.accountId, { email: 'gone@example.com' });
    await addSuppressionList(testDb(), { accountId: tenant.accountId, suppressions: [{ channel: 'email', address: 'gone@example.com', reason: 'complaint' }], source: 'cli' });
    await caller(tenant.key).contacts.delete({ id: first.id });
    const again = await buildContact(tenant.accountId, { email: 'GONE@example.com' });
    const { sequence } = await caller(tenant.key).sequences.create({ name: 'Again', status: 'active', steps: [EMAIL] } as never);
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [again.id] });
    const { engine, messages } = engineAt();
    await engine.runUntilIdle();
    expect((await messagesOf(tenant.accountId))[0]).to.include({ contact_id: again.id, status: 'skipped', error: 'suppressed' });
    expect(readdirSync(messages.outboxDir)).to.deep.equal([]);
  });

  it('skips a WhatsApp step to a suppressed number (any writing of it: E.164 with its +), and posts to Graph for the others', async () => {
    const graph = await startGraphStandIn();
    try {
      const settings = channelSettings({ whatsappApiUrl: graph.apiUrl });
      const tenant = await buildTenant();
      await putWhatsAppChannel(testDb(), { accountId: tenant.accountId, phoneNumberId: graph.phoneNumberId, accessToken: graph.accessToken }, settings);
      const { sequence } = await caller(tenant.key).sequences.create({ name: 'Chat', status: 'active', steps: [WHATSAPP, AFTER] } as never);
      const stopped = await buildContact(tenant.accountId, { phone: '0049 (151) 1285-5001' });
      const fine = await buildContact(tenant.accountId, { phone: '+44 7700 900123' });
      await addSuppressionList(testDb(), { accountId: tenant.accountId, suppressions: [{ channel: 'whatsapp', address: '+49 151 1285 5001', reason: 'opt_out' }], source: 'cli' });
      await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [stopped.id, fine.id] });
      const { engine } = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
      await engine.runUntilIdle();

      expect(graph.requests.map((r) => (r.json as { to: string }).to)).to.deep.equal(['447700900123']);
      const messages = await messagesOf(tenant.accountId);
      expect(messages.find((m) => m.contact_id === stopped.id)).to.include({ status: 'skipped', error: 'suppressed' });
      const timeline = await timelineOf(tenant.key, sequence.id, stopped.id);
      expect(timeline.status).to.equal('completed');
      expect(timeline.executions.find((e: { stepId: string }) => e.stepId === 'chat')).to.include({ status: 'skipped', reason: 'suppressed' });
      const { stats } = await caller(tenant.key).sequences.stats({ id: sequence.id });
      expect(stats.steps.find((s) => s.stepId === 'chat')).to.deep.include({ reached: 2, completed: 1, skipped: { suppressed: 1 } });
    } finally {
      await graph.close();
    }
  });

  it('sends again once the suppression is removed', async () => {
    const tenant = await buildTenant();
    const contact = await buildContact(tenant.accountId, { email: 'back@example.com' });
    await addSuppressionList(testDb(), { accountId: tenant.accountId, suppressions: [{ channel: 'email', address: 'back@example.com' }], source: 'cli' });
    await caller(tenant.key).suppressions.remove({ channel: 'email', address: 'back@example.com' });
    const { sequence } = await caller(tenant.key).sequences.create({ name: 'Back', status: 'active', steps: [EMAIL] } as never);
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    const { engine } = engineAt();
    await engine.runUntilIdle();
    expect((await messagesOf(tenant.accountId))[0]).to.include({ status: 'captured' });
  });
});
