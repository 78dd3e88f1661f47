import type { Database } from '../../../db/database';
import { withTransaction } from '../../../db/sql/transaction';
import type { Logger } from '../../../logging/logger';
import { resumeChannelPauses, takeDueProbes, type PauseRow } from '../../channels/channel-pauses';
import type { ChannelSettings } from '../../channels/channel-settings';
import { resolveEmailSender, resolveWhatsAppSender } from '../../channels/senders';
import type { SmtpTransports } from '../../messages/smtp-transports';

// The probes of paused channels (docs/channels.md "What pauses a channel, and how it resumes"):
// on the retry schedule (5 s, 30 s, 2 min, 10 min, 1 h, 4 h, then every 12 h from the pause),
// a login with no message: for email nodemailer's verify() (connect, EHLO, STARTTLS when
// offered, AUTH; bounded by the relay's connection, greeting and socket timeouts), for WhatsApp
// a GET of the phone number id with the token (bounded by timeoutMs). One that succeeds resumes
// the channel (channel.resumed, by "probe"); one that fails leaves it paused until the next.
// Whose turn a probe is, is decided by the database (takeDueProbes); the engine's loop calls
// pass() with its clock and awaits settled() as it does the dispatcher's requests.

export interface ProbeOptions {
  settings: ChannelSettings;
  transports: SmtpTransports;
  timeoutMs: number;
  logger: Logger;
  // How often the pauses are read when none is known to be due (another process's pauses are
  // found within this).
  pollMs: number;
  // A channel resumed: its sends are due.
  resumed: () => void;
}

export class ChannelProbes {
  private nextReadAt = 0;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly db: Database,
    private readonly options: ProbeOptions,
  ) {}

  // This process paused a channel: read the pauses at the next pass.
  soon(): void {
    this.nextReadAt = 0;
  }

  // Starts the probes due at `now` (the engine's clock); answers how many, and when to look next.
  async pass(now: number): Promise<{ started: number; nextAt: number }> {
    if (now < this.nextReadAt) return { started: 0, nextAt: this.nextReadAt };
    const { taken, nextAt } = await takeDueProbes(this.db, new Date(now));
    this.nextReadAt = Math.min(now + this.options.pollMs, nextAt?.getTime() ?? Infinity);
    for (const row of taken) {
      const work = this.probe(row).catch((error: unknown) => this.options.logger.warn({ err: error, accountId: row.account_id, channel: row.channel }, 'a channel probe could not be recorded'));
      this.running.add(work);
      void work.finally(() => this.running.delete(work));
    }
    return { started: taken.length, nextAt: this.nextReadAt };
  }

  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  private async probe(row: PauseRow): Promise<void> {
    const ok = row.channel === 'email' ? await this.probeEmail(row.account_id) : await this.probeWhatsApp(row.account_id);
    if (!ok) return;
    const resumed = await withTransaction(this.db, (transaction) =>
      resumeChannelPauses(this.db, { accountId: row.account_id, channel: row.channel, by: 'probe', onlyId: row.id }, transaction),
    );
    if (resumed.length > 0) this.options.resumed();
  }

  private async probeEmail(accountId: string): Promise<boolean> {
    const sender = await resolveEmailSender(this.db, accountId, this.options.settings);
    // No relay (messages are captured): nothing to refuse them.
    if (!sender.smtpUrl) return true;
    try {
      return await this.options.transports.verify(sender.smtpUrl);
    } catch {
      return false;
    }
  }

  private async probeWhatsApp(accountId: string): Promise<boolean> {
    const sender = await resolveWhatsAppSender(this.db, accountId, this.options.settings);
    if (!sender.accessToken || !sender.phoneNumberId) return true;
    const url = `${sender.apiUrl.replace(/\/+$/, '')}/${encodeURIComponent(sender.phoneNumberId)}?fields=id`;
    const abort = new AbortController();
    // A plain timer, cleared when the answer is in (not AbortSignal.timeout: see bounded-post.ts).
    const timer = setTimeout(() => abort.abort(), this.options.timeoutMs);
    try {
      const answer = await fetch(url, { headers: { authorization: `Bearer ${sender.accessToken}`, accept: 'application/json' }, signal: abort.signal, redirect: 'manual' });
      await answer.arrayBuffer();
      return answer.status >= 200 && answer.status < 300;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}
