import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { StepOf } from '../../src/schemas/sequence-definition';
import { DEFAULT_CHANNEL_SETTINGS, type ChannelSettings } from '../../src/services/channels/channel-settings';
import { emailMessageId } from '../../src/services/engine/outbound/channels/email';
import { buildTemplateContext } from '../../src/services/messages/render-context';
import { renderEmail } from '../../src/services/messages/render-message';
import { SMTP_POOL } from '../../src/services/messages/smtp-transports';
import { secretsKeyFrom } from '../../src/services/secrets/secrets-key';
import { unsubscribeUrl } from '../../src/services/unsubscribe/unsubscribe-links';
import type { EngineBench } from './context';
import { productEngine, sleep, StatementCounter } from './context';
import { measureFloor, type FloorMessage } from './email-floor';
import { seedContacts, seedRuns } from './seed';
import { startSmtpSink } from './smtp-sink';

// The email case (issue 28): messages per second from the engine to an SMTP server in another
// process (smtp-sink-process.cjs), each message's templates rendered for its contact; beside it,
// in the same run, a bare nodemailer pool configured as the engine's sends the same messages
// already rendered: the floor. Also the rendering's own cost per message.

export const EMAIL_STEP: StepOf<'email'> = {
  id: 'hello',
  type: 'email',
  from: 'Bench <news@bench.test>',
  subject: 'Hello {{ contact.email }}, your {{ sequence.name | truncate: 20 }} news',
  html:
    '<h1>Hello {{ contact.firstName | default: "there" }}</h1>' +
    '<p>Thanks for joining {{ sequence.name }}. Here is what is new this week, written for {{ contact.email }}.</p>' +
    '<ul><li>One thing</li><li>Another thing</li><li>A third thing</li></ul>' +
    '<p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>',
};

export interface EmailResult {
  messages: number;
  engineSeconds: number;
  enginePerSecond: number;
  floorSeconds: number;
  floorPerSecond: number;
  renderMicros: number;
  received: number;
  duplicated: number;
  notSent: number;
  // The engine's statements while it sent the measured messages, and where their time went.
  statements: number;
  topStatements: Array<[string, { count: number; ms: number }]>;
}

const WARM = 500;

// BENCH_EMAIL_MARKS=1: the monotonic clock (µs, as a --cpu-prof profile's timestamps) where
// each measured part begins and ends, on stderr: to read a profile of the bench by phase.
// Beside it, this process's CPU (µs, all its threads) and mariadbd's (clock ticks, when found).
function mark(what: string): void {
  if (process.env.BENCH_EMAIL_MARKS !== '1') return;
  const cpu = process.cpuUsage();
  process.stderr.write(`bench: mark ${what} cpu ${cpu.user + cpu.system} mariadbd ${mariadbTicks()} at ${process.hrtime.bigint() / 1000n}\n`);
}

function mariadbTicks(): number {
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'mariadbd') continue;
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone, or not ours to read
    }
  }
  return NaN;
}

export async function measureEmail(bench: EngineBench, count: number, progress: (text: string) => void): Promise<EmailResult> {
  const sink = await startSmtpSink();
  const outboxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-email-outbox-'));
  const settings: ChannelSettings = {
    ...DEFAULT_CHANNEL_SETTINGS,
    secrets: secretsKeyFrom(randomBytes(32)),
    smtpUrl: sink.url,
    // Through the shared relay only From a verified domain goes out: the step's, as the
    // operator's own (EMAIL_FROM's domain counts as verified for every account).
    emailFrom: EMAIL_STEP.from!,
    // The server-wide cap is the case's subject, not a bound on it.
    emailMaxPerSecond: 1_000_000,
    publicBaseUrl: 'https://bench.test',
  };
  try {
    const contacts = await seedContacts(bench.admin, bench.accountId, count + WARM);
    const sequenceId = await bench.newSequence([EMAIL_STEP]);

    progress(`email: ${WARM} warm-up messages`);
    await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId, contacts, count: WARM, contactOffset: count, stepId: EMAIL_STEP.id, state: 'due', dueAt: new Date(Date.now() - 1000) });
    await untilSent(bench, settings, outboxDir, sequenceId, { received: WARM, total: WARM }, sink);

    progress(`email: ${count} messages through the engine`);
    await sink.reset();
    await seedRuns(bench.admin, { accountId: bench.accountId, sequenceId, contacts, count, stepId: EMAIL_STEP.id, state: 'due', dueAt: new Date(Date.now() - 1000) });
    const statements = new StatementCounter();
    mark('engine start');
    const engineSeconds = await untilSent(bench, settings, outboxDir, sequenceId, { received: count, total: WARM + count }, sink, statements);
    mark('engine end');
    if (process.env.BENCH_EMAIL_MARKS === '1') {
      for (const [shape, { count: n, ms }] of [...statements.shapes].sort((a, b) => b[1].count - a[1].count)) process.stderr.write(`bench: statement ${n} ${ms.toFixed(0)} ms ${shape.slice(0, 160)}\n`);
    }
    const engineStats = await sink.stats();
    const [rows] = await bench.admin.query(
      "SELECT COUNT(*) AS c FROM messages WHERE sequence_id = ? AND status <> 'sent'",
      [sequenceId],
    );
    const notSent = Number((rows as Array<{ c: number }>)[0].c);

    // The same messages, rendered here (timed: the rendering's cost per message), then sent by
    // the bare pool.
    progress(`email: the same ${count} messages through a bare nodemailer pool`);
    const [contactRows] = await bench.admin.query('SELECT * FROM contacts WHERE account_id = ? ORDER BY id LIMIT ?', [bench.accountId, count]);
    const sequence = { id: sequenceId, name: 'bench', version: 1 };
    const renderStarted = performance.now();
    const floorMessages: FloorMessage[] = (contactRows as Array<Record<string, unknown> & { id: string; email: string }>).map((contact, i) => {
      const link = unsubscribeUrl(settings, { accountId: bench.accountId, contactId: contact.id, channel: 'email' });
      const rendered = renderEmail(EMAIL_STEP, buildTemplateContext({ contact: contact as never, run: null, sequence, unsubscribeUrl: link }));
      return {
        from: EMAIL_STEP.from!,
        to: contact.email,
        ...rendered,
        messageId: emailMessageId(`floor_${i}`, EMAIL_STEP.from!),
        headers: { 'List-Unsubscribe': `<${link}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      };
    });
    const renderMicros = ((performance.now() - renderStarted) * 1000) / Math.max(1, floorMessages.length);
    mark('floor start');
    const floor = await measureFloor(sink, floorMessages, SMTP_POOL);
    mark('floor end');
    return {
      messages: count,
      engineSeconds,
      enginePerSecond: count / engineSeconds,
      floorSeconds: floor.seconds,
      floorPerSecond: floor.perSecond,
      renderMicros,
      received: engineStats.messages,
      statements: statements.total,
      topStatements: [...statements.shapes].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12),
      duplicated: engineStats.duplicated,
      notSent,
    };
  } finally {
    await sink.close();
    fs.rmSync(outboxDir, { recursive: true, force: true });
  }
}

async function anyFailed(bench: EngineBench, sequenceId: string): Promise<boolean> {
  const [rows] = await bench.admin.query("SELECT 1 FROM messages WHERE sequence_id = ? AND status = 'failed' LIMIT 1", [sequenceId]);
  return (rows as unknown[]).length > 0;
}

// Starts an engine as the service builds one, waits until the messages are received and
// recorded `sent`, stops it; the seconds from the start to the last record.
async function untilSent(
  bench: EngineBench,
  settings: ChannelSettings,
  outboxDir: string,
  sequenceId: string,
  // Messages the server is to receive (since its last reset), and messages of the sequence to be `sent` in all.
  { received, total }: { received: number; total: number },
  sink: { stats(): Promise<{ messages: number }> },
  statements = new StatementCounter(),
): Promise<number> {
  const { engine, db } = productEngine(bench.url, statements, { messages: { settings, outboxDir } });
  const started = performance.now();
  engine.start();
  try {
    // The server's count first (cheap to ask), then the messages recorded `sent`.
    while ((await sink.stats()).messages < received && !(await anyFailed(bench, sequenceId))) {
      if (performance.now() - started > 30 * 60_000) throw new Error(`email: ${(await sink.stats()).messages} received of ${received} after 30 minutes`);
      await sleep(20);
    }
    for (;;) {
      // Every message ended (sent, or failed: counted against the case as not sent).
      const [rows] = await bench.admin.query("SELECT COUNT(*) AS c FROM messages WHERE sequence_id = ? AND status IN ('sent', 'failed')", [sequenceId]);
      if (Number((rows as Array<{ c: number }>)[0].c) >= total) break;
      if (performance.now() - started > 30 * 60_000) throw new Error(`email: fewer than ${total} messages recorded sent after 30 minutes`);
      await sleep(20);
    }
    return (performance.now() - started) / 1000;
  } finally {
    await engine.stop(10_000);
    await db.close();
  }
}
