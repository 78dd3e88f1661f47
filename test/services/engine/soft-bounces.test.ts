import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { select } from '../../../src/db/sql/statements';
import { SOFT_BOUNCE_STREAK } from '../../../src/services/suppressions/soft-bounces';
import { caller } from '../../support/app';
import { channelSettings } from '../../support/channels';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { startSmtpServer } from '../../support/smtp-server';
import { engineAt } from './support';

// A soft bounce that keeps coming (docs/channels.md "Bounces, classified"): messages to one
// address that a real SMTP server puts off (452 4.2.2 on RCPT) until their retry schedule is
// spent; the third such message in a row suppresses the address, never the first two.

const EMAIL = { id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>' };
const SCHEDULE = [1_000, 6_000, 33_000, 132_000, 660_000, 3_960_000];

describe('soft bounces: repeated on consecutive messages, they suppress the address', function () {
  this.timeout(30_000);

  it(`suppresses an address after ${SOFT_BOUNCE_STREAK} messages in a row soft-bounced to the end of their schedule, not before`, async () => {
    const server = await startSmtpServer(undefined, { rcpt: (address) => (address === 'full@example.net' ? '452 4.2.2 Mailbox full (mx.example.net)' : undefined) });
    const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>', smtpUrl: server.url });
    const { engine, advance } = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
    try {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId, { email: 'full@example.net' });
      const suppressions = () => select<{ address: string; reason: string; source: string }>(testDb(), 'SELECT address, reason, source FROM suppressions WHERE account_id = ?', [accountId]);
      const sendOne = async (name: string) => {
        const { sequence } = await caller(key).sequences.create({ name, status: 'active', steps: [EMAIL] } as never);
        await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
        for (const wait of SCHEDULE) {
          advance(wait);
          await engine.runUntilIdle();
        }
      };
      for (let i = 1; i < SOFT_BOUNCE_STREAK; i += 1) {
        await sendOne(`Campaign ${i}`);
        expect(await suppressions()).to.deep.equal([]);
      }
      await sendOne('Campaign last');
      const messages = await select<{ id: string; status: string; error: string }>(testDb(), 'SELECT id, status, error FROM messages WHERE contact_id = ? ORDER BY created_at', [contact.id]);
      expect(messages.map((message) => [message.status, message.error])).to.deep.equal(
        Array(SOFT_BOUNCE_STREAK).fill(['failed', 'deferred: 452 4.2.2 the receiving server asked us to try again later']),
      );
      expect(await suppressions()).to.deep.equal([{ address: 'full@example.net', reason: 'hard_bounce', source: `message:${messages.at(-1)!.id}` }]);
      expect(server.attempts).to.have.length(0);
    } finally {
      await engine.stop(50);
      await server.close();
    }
  });

  it('a message taken in between breaks the streak', async () => {
    let full = true;
    const server = await startSmtpServer(undefined, { rcpt: () => (full ? '452 4.2.2 Mailbox full' : undefined) });
    const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>', smtpUrl: server.url });
    const { engine, advance } = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
    try {
      const { key, accountId } = await buildTenant();
      const contact = await buildContact(accountId);
      const sendOne = async (name: string) => {
        const { sequence } = await caller(key).sequences.create({ name, status: 'active', steps: [EMAIL] } as never);
        await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
        for (const wait of SCHEDULE) {
          advance(wait);
          await engine.runUntilIdle();
        }
      };
      await sendOne('One');
      full = false;
      await sendOne('Two');
      full = true;
      for (let i = 1; i < SOFT_BOUNCE_STREAK; i += 1) await sendOne(`Again ${i}`);
      expect(await select(testDb(), 'SELECT id FROM suppressions WHERE account_id = ?', [accountId])).to.have.length(0);
      expect(server.received).to.have.length(1);
    } finally {
      await engine.stop(50);
      await server.close();
    }
  });
});
