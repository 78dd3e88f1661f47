import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { select } from '../../../src/db/sql/statements';
import { putEmailChannel } from '../../../src/services/channels/email-channel';
import { caller } from '../../support/app';
import { channelSettings, channelsApi } from '../../support/channels';
import { testDb } from '../../support/db';
import { buildTenant } from '../../support/factories';
import { startSmtpServer } from '../../support/smtp-server';
import { engineAt } from './support';

// A campaign-sized case of the issue: 2,000 contacts in one sequence with an email step, sent
// through a real SMTP server that asks for a login; its password is changed after 500 messages
// were taken, and the account's settings are then saved with the new one. Nobody loses
// anything: no run fails, no address is suppressed, and each of the 2,000 arrives once
// (counted by Message-ID at the server). The engine's clock is moved by hand.

const CONTACTS = 2_000;
const ROTATED_AFTER = 500;

describe('channel pauses: a campaign through a relay whose password is changed mid-send', function () {
  this.timeout(120_000);

  it('2,000 contacts, the password changed after 500 sends, then the settings saved: 0 runs failed, 0 suppressed, each delivered once', async () => {
    // The relay's password is rotated once it has taken 500 messages: every new login after
    // that is refused (535 5.7.8); sessions already logged in finish what they have.
    const server = await startSmtpServer(undefined, {
      auth: { user: 'shop', password: () => (server.messageIds.length >= ROTATED_AFTER ? 'rotated-password' : 'first-password') },
      parse: false,
    });
    const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>', emailMaxPerSecond: 1_000 });
    const { engine, advance } = engineAt(Date.now() + 1, {
      messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')), smtpTimeouts: { connectionMs: 2_000, greetingMs: 2_000, socketMs: 5_000 } },
    });
    try {
      const { key, accountId } = await buildTenant();
      const relay = (pass: string) => server.url.replace('smtp://', `smtp://shop:${pass}@`);
      await putEmailChannel(testDb(), { accountId, from: 'shop@example.com', smtpUrl: relay('first-password'), maxPerSecond: 1_000 }, settings);
      const { sequence } = await caller(key).sequences.create({
        name: 'Campaign',
        status: 'active',
        steps: [{ id: 'mail', type: 'email', subject: 'News', html: '<p>News</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>' }],
      } as never);
      for (let i = 0; i < CONTACTS; i += 100) {
        await caller(key).contacts.batch({ contacts: Array.from({ length: 100 }, (_, j) => ({ email: `reader${i + j}@example.net` })) });
      }
      const ids = (await select<{ id: string }>(testDb(), 'SELECT id FROM contacts WHERE account_id = ?', [accountId])).map((row) => row.id);
      for (let i = 0; i < ids.length; i += 500) await caller(key).sequences.enroll({ id: sequence.id, contactIds: ids.slice(i, i + 500) });

      for (let pass = 0; pass < 50; pass += 1) {
        advance(1_000);
        await engine.runUntilIdle();
        const [queued] = await select<{ n: number | string }>(testDb(), "SELECT COUNT(*) AS n FROM outbox WHERE account_id = ? AND status = 'queued'", [accountId]);
        const [paused] = await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM channel_pauses WHERE account_id = ?', [accountId]);
        if (Number(paused!.n) > 0 && Number(queued!.n) + server.messageIds.length === CONTACTS) break;
      }
      expect(server.messageIds.length).to.be.at.least(ROTATED_AFTER).and.below(CONTACTS);
      const stalled = (await caller(key).sequences.runs({ id: sequence.id, limit: 5, status: 'running' } as never)).runs as Array<{ waitingFor: string | null }>;
      expect(stalled.map((run) => run.waitingFor)).to.deep.equal(Array(5).fill('channel_paused'));

      // The account's settings saved with the new password: the channel resumes, the rest goes.
      const res = await channelsApi(settings)(key).put('/channels/email').send({ from: 'shop@example.com', smtpUrl: relay('rotated-password'), maxPerSecond: 1_000 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      for (let pass = 0; pass < 50 && server.messageIds.length < CONTACTS; pass += 1) {
        advance(1_000);
        await engine.runUntilIdle();
      }

      expect(server.messageIds).to.have.length(CONTACTS);
      expect(new Set(server.messageIds).size).to.equal(CONTACTS);
      const keys = await select<{ message_key: string }>(testDb(), 'SELECT message_key FROM messages WHERE account_id = ?', [accountId]);
      expect(new Set(server.messageIds)).to.deep.equal(new Set(keys.map((row) => `<${row.message_key}@example.com>`)));
      const byStatus = await select<{ status: string; n: number | string }>(testDb(), 'SELECT status, COUNT(*) AS n FROM sequence_runs WHERE sequence_id = ? GROUP BY status', [sequence.id]);
      expect(byStatus.map((row) => [row.status, Number(row.n)])).to.deep.equal([['completed', CONTACTS]]);
      expect(await select(testDb(), 'SELECT id FROM suppressions WHERE account_id = ?', [accountId])).to.have.length(0);
      const [failed] = await select<{ n: number | string }>(testDb(), "SELECT COUNT(*) AS n FROM run_step_executions WHERE account_id = ? AND status = 'failed'", [accountId]);
      expect(Number(failed!.n)).to.equal(0);
      const messages = await select<{ status: string; n: number | string }>(testDb(), 'SELECT status, COUNT(*) AS n FROM messages WHERE account_id = ? GROUP BY status', [accountId]);
      expect(messages.map((row) => [row.status, Number(row.n)])).to.deep.equal([['sent', CONTACTS]]);
      const events = await select<{ type: string; n: number | string }>(
        testDb(),
        "SELECT type, COUNT(*) AS n FROM events WHERE account_id = ? AND type IN ('channel.paused', 'channel.resumed') GROUP BY type ORDER BY type",
        [accountId],
      );
      expect(events.map((row) => [row.type, Number(row.n)])).to.deep.equal([
        ['channel.paused', 1],
        ['channel.resumed', 1],
      ]);
    } finally {
      await engine.stop(50);
      await server.close();
    }
  });
});
