// How a batch is shared out when more runs are due than it holds (run-queue.ts claims them):
// round-robin over the accounts, each account's runs in due order. Every account with due runs
// gets its turn in the batch, and what one account cannot use (it has fewer due runs than its
// share) goes to the others: a burst of one account fills only what nobody else needs.
// (The runs' fair claim; the sends' fair dispatch, per account and target, is
// outbound/send-shares.ts.)

export interface DueRun {
  id: string;
  accountId: string;
  dueAt: Date;
}

// Each account's share of a batch of `limit` among `accounts` accounts: what to read of an
// account whose due runs are not known yet (at least one).
export function shareOf(limit: number, accounts: number): number {
  return Math.max(1, Math.floor(limit / Math.max(1, accounts)));
}

// The runs a batch takes of the candidates: the first of every account, then the second of
// every account, and so on (the earlier due first within a round), up to `limit`.
export function roundRobin<T extends DueRun>(candidates: readonly T[], limit: number): T[] {
  const seen = new Map<string, number>();
  const ranked = [...candidates]
    .sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime())
    .map((run) => {
      const rank = seen.get(run.accountId) ?? 0;
      seen.set(run.accountId, rank + 1);
      return { run, rank };
    });
  ranked.sort((a, b) => a.rank - b.rank || a.run.dueAt.getTime() - b.run.dueAt.getTime());
  return ranked.slice(0, Math.max(0, limit)).map(({ run }) => run);
}
