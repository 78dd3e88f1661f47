import type { Transaction } from 'sequelize';
import type { Database } from '../../db/database';
import { toDate } from '../../db/sql/rows';
import { select } from '../../db/sql/statements';
import type { MessageChannel } from '../../schemas/message';
import type { Step } from '../../schemas/sequence-definition';
import { frequencyCapsOf, type FrequencyCap } from '../channels/frequency-caps';
import { linksOf } from './chain';
import type { ClaimedRun, RunResult } from './claimed-run';

// Caps across sequences (docs/channels.md "Frequency caps"): a marketing email or WhatsApp
// message is queued only while its contact has fewer than `max` marketing messages of that
// channel within the rolling window; else it waits until the window allows it, or its step is
// skipped (`frequency_capped`), as the channel's cap says.
//
// Where it is decided: in the record's transaction, as the send is about to be queued
// (record-batch.ts), never at the send. Exact under concurrent engines by the contact's lock:
// the record locks the contacts of its capped sends (with those it changes, contacts before
// runs: docs/architecture.md "One lock order"), and every message that counts is queued by a
// record holding its contact's lock, so two records that would both take a contact's last slot
// run one after the other, and the second (READ COMMITTED on MySQL/MariaDB; one writer on
// SQLite) counts the first's message. One SELECT per batch counts them all.
//
// What counts: the contact's marketing messages of the channel (messages.category) that are
// waiting to go (queued, sending) or were handed to a provider (sent_at set: sent, captured,
// delivered, read, and a later failure or bounce), at the time they were sent, else the time
// they were queued. One skipped, cancelled, or failed before any provider took it (no sent_at)
// frees its slot. Test sends from the dashboard never count.

export interface CapCandidate {
  run: ClaimedRun;
  channel: MessageChannel;
  // The run's visit at the message step (a chain's send is at a later visit than the run's).
  visit: number;
}

export type CapVerdict = { kind: 'wait'; until: Date } | { kind: 'skip' };

// A run whose plan ends in queueing a marketing message: its channel (the step is the chain's last).
export function marketingSendOf(result: RunResult): { channel: MessageChannel; step: Step } | null {
  if (result.kind !== 'step') return null;
  const links = linksOf(result);
  const { step, outcome } = links[links.length - 1]!;
  if (outcome.kind !== 'send' || (outcome.channel !== 'email' && outcome.channel !== 'whatsapp')) return null;
  if ((step.type === 'email' || step.type === 'whatsapp') && step.category === 'transactional') return null;
  return { channel: outcome.channel, step };
}

export const capKey = (accountId: string, channel: string) => `${accountId} ${channel}`;

// The caps of the batch's marketing sends, read in the record's transaction before any lock, and
// locking nothing (a cap saved while this record runs applies from the next), and the runs whose contacts the record must lock for them.
export async function capsOfBatch(
  db: Database,
  results: readonly RunResult[],
  transaction: Transaction,
): Promise<{ caps: Map<string, FrequencyCap>; runs: ClaimedRun[] }> {
  const sends = results.flatMap((result) => {
    const send = marketingSendOf(result);
    return send ? [{ run: result.run, channel: send.channel }] : [];
  });
  if (sends.length === 0) return { caps: new Map(), runs: [] };
  const caps = await frequencyCapsOf(db, sends.map(({ run, channel }) => ({ accountId: run.accountId, channel })), transaction);
  return { caps, runs: sends.filter(({ run, channel }) => caps.has(capKey(run.accountId, channel))).map(({ run }) => run) };
}

// Decides, in batch order, which capped sends go (absent from the answer), wait, or are
// skipped. Called with the candidates' contacts locked.
export async function capVerdicts(
  db: Database,
  candidates: readonly CapCandidate[],
  caps: ReadonlyMap<string, FrequencyCap>,
  now: Date,
  transaction: Transaction,
): Promise<Map<string, CapVerdict>> {
  const verdicts = new Map<string, CapVerdict>();
  const capped = candidates.filter((candidate) => caps.has(capKey(candidate.run.accountId, candidate.channel)));
  if (capped.length === 0) return verdicts;
  const longest = Math.max(...capped.map((candidate) => caps.get(capKey(candidate.run.accountId, candidate.channel))!.perMs));
  const rows = await select<{ contact_id: string; channel: string; run_id: string | null; run_visit: number | string | null; counted_at: unknown }>(
    db,
    `SELECT contact_id, channel, run_id, run_visit, COALESCE(sent_at, created_at) AS counted_at FROM messages
     WHERE contact_id IN (?) AND channel IN (?) AND category = 'marketing' AND test = ?
       AND (status IN ('queued', 'sending') OR sent_at IS NOT NULL) AND COALESCE(sent_at, created_at) > ?`,
    [[...new Set(capped.map((candidate) => candidate.run.contactId))], [...new Set(capped.map((candidate) => candidate.channel))], false, new Date(now.getTime() - longest)],
    transaction,
  );
  // Each contact and channel's counted times, oldest first; the batch's own admissions join them.
  const slots = new Map<string, number[]>();
  const own = new Set<string>();
  for (const row of rows) {
    if (row.run_id !== null) own.add(`${row.run_id}/${Number(row.run_visit)}`);
    const key = `${row.contact_id} ${row.channel}`;
    slots.set(key, [...(slots.get(key) ?? []), toDate(row.counted_at).getTime()]);
  }
  for (const list of slots.values()) list.sort((a, b) => a - b);
  for (const { run, channel, visit } of capped) {
    // Begun again at the same visit (resumed, woken): its message is queued already, its slot taken.
    if (own.has(`${run.id}/${visit}`)) continue;
    const cap = caps.get(capKey(run.accountId, channel))!;
    const key = `${run.contactId} ${channel}`;
    const since = now.getTime() - cap.perMs;
    const inWindow = (slots.get(key) ?? []).filter((at) => at > since);
    if (inWindow.length < cap.max) {
      slots.set(key, [...(slots.get(key) ?? []), now.getTime()]);
      continue;
    }
    // The window allows one more once the oldest messages beyond max - 1 have left it.
    const leaves = inWindow[inWindow.length - cap.max]! + cap.perMs;
    verdicts.set(run.id, cap.whenCapped === 'skip' ? { kind: 'skip' } : { kind: 'wait', until: new Date(Math.max(leaves, now.getTime() + 1)) });
  }
  return verdicts;
}
