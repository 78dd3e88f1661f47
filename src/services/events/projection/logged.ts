// This process committed a run log row: its projection task (projection-task.ts) looks soon,
// instead of at its next poll. Rows of other processes are found by the poll.

type Listener = () => void;
const listeners = new Set<Listener>();

export function onLogged(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function notifyLogged(): void {
  for (const listener of listeners) listener();
}
