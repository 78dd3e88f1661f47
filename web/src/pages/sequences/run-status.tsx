const TONE: Record<string, string> = {
  pending: 'pending',
  running: 'active',
  paused: 'expired',
  completed: 'disabled',
  failed: 'failed',
  cancelled: 'disabled',
  draft: 'disabled',
  active: 'active',
  archived: 'disabled',
};

// A run's or a sequence's status as a badge.
export function RunStatus({ status }: { status: string }) {
  return <span className={`badge ${TONE[status] ?? 'disabled'}`}>{status[0].toUpperCase() + status.slice(1)}</span>;
}
