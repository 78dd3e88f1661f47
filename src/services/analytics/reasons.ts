import { SKIP_REASONS } from '../../schemas/message';

// The reason a run ended, or skipped a step, as a short key for the counters (exits by reason,
// skips by reason): the writers keep their full text in the run and the timeline; the counters
// keep a handful of keys, so that a reason's rows stay few whatever the texts are.
// - exit_rule: an exitWhen rule held (exit-rules/exit-rules.ts exitReason);
// - unenrolled: unenroll (sequences/unenroll.ts);
// - step_failed: a step failed for good (its reason is `step "id": ...`);
// - step_missing: its step is not in its version, or it could not be planned (engine/plan-*.ts);
// - contact_deleted: its contact was deleted with it;
// - a message step's skip (schemas/message.ts SKIP_REASONS): unsubscribed, no_email, ...;
// - otherwise the status it ended in (cancelled, failed, completed: runs.transition's moves).
export const REASON_KEYS = ['exit_rule', 'unenrolled', 'step_failed', 'step_missing', 'contact_deleted', ...SKIP_REASONS, 'cancelled', 'failed', 'completed'] as const;
export type ReasonKey = (typeof REASON_KEYS)[number];

export const CONTACT_DELETED = 'contact deleted';

export function reasonKey(status: 'completed' | 'cancelled' | 'failed', reason: string | null | undefined): ReasonKey {
  if (!reason) return status;
  if ((SKIP_REASONS as readonly string[]).includes(reason)) return reason as ReasonKey;
  if (reason === 'unenrolled') return 'unenrolled';
  if (reason === CONTACT_DELETED) return 'contact_deleted';
  if (reason.startsWith('exitWhen:')) return 'exit_rule';
  if (reason.startsWith('cannot plan:') || /^step ".*" is not in version \d+$/.test(reason)) return 'step_missing';
  if (/^step "[^"]*": /.test(reason)) return 'step_failed';
  return status;
}
