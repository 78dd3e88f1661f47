import type { Database } from '../../../../db/database';
import type { SkipReason } from '../../../../schemas/message';
import type { SendFailureVerdict } from '../../../messages/send-failures';
import type { ClaimedSend } from '../../../runs/outbox';

// A channel: how the outbound layer sends what one kind of step queued (a webhook, an email, a
// WhatsApp message). The layer claims, shares out, rates and records; a channel only sends.

export interface SendResult {
  ok: boolean;
  // Why it failed (null when it did not).
  reason: string | null;
  // What the timeline shows of it: a webhook's { responseStatus, durationMs }.
  detail: Record<string, unknown>;
  // A failure no retry can mend (the endpoint was deleted): the step fails at once.
  final: boolean;
  // Cut short by the service itself (a stop): not an attempt; sent again with the same id.
  abandoned: boolean;
  // The receiver may have acted on it though no answer came (an email whose final dot was
  // written): sent again at most once, then recorded `unconfirmed` (record-outcomes.ts).
  unknownOutcome?: boolean;
  // A message step's send that sent nothing, and why (the contact unsubscribed, or has no
  // address the channel can use): the step is skipped with this reason and the run goes on.
  skipped?: SkipReason;
  // A message step's message (messages/message-store.ts): its row is moved with the outcome,
  // in the outcome's transaction (sent or captured, skipped, retried, failed).
  message?: { id: string; providerMessageId?: string | null; captured?: boolean };
  // Who caused a failure (messages/send-failures.ts), and the address it was sent to: a hard
  // bounce suppresses that address, a sender failure pauses the channel (or the step's template).
  failure?: SendFailureVerdict & { address: string };
}

export type Send = (send: ClaimedSend, signal: AbortSignal) => Promise<SendResult>;

export interface Channel {
  readonly name: string;
  // Sends claimed ahead, beyond those under way (the dispatcher's per-target bound), each started
  // as one under way ends, so a look claims (and a record writes) many at once. One not started
  // within startWithinMs of its claim goes back (its lease must outlast the attempt it begins).
  readonly claimAhead?: { sends: number; startWithinMs: number };
  // Its outcomes wait up to this long for others to be recorded with them (never while nothing
  // of this channel is under way or waiting, nor beside another channel's outcome).
  readonly recordLingerMs?: number;
  // What a batch of claimed sends needs (their targets, read in one statement), and the
  // function that sends one. Never throws for a receiver's failure: that is a result.
  load(db: Database, sends: readonly ClaimedSend[]): Promise<Send>;
}
