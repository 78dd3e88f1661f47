import type { SendGroup } from '../../runs/outbox';

// Which groups of due sends a pass starts, and how many of each: round-robin over (account,
// channel, target) with due work, starting after the group the last pass served last, each
// within its target's free slots (a receiver that hangs holds only its own), its account's
// rate for the channel, and the process's free slots, shared evenly. A pure function of what
// the dispatcher knows: the groups (outbox.ts sendGroups) and its own counts. (The sends' fair
// dispatch; the runs' fair claim across accounts is ../claim-shares.ts.)

export interface ShareInput {
  groups: readonly SendGroup[];
  now: number;
  // The key of the group served last by the previous pass.
  cursor: string | undefined;
  // This process's free request slots, all targets together.
  free: number;
  // Sends one group may hold (under way, and claimed ahead: dispatcher.ts).
  perTarget: number | ((group: SendGroup) => number);
  inFlight: (key: string) => number;
  tokens: (group: SendGroup) => number;
  nextTokenAt: (group: SendGroup) => number;
}

export interface Share {
  picks: Array<{ group: SendGroup; key: string; limit: number; quantumBound: boolean }>;
  cursor: string | undefined;
  // The earliest time a group not started now could start: its due time, or its account's
  // next token. Null: nothing is waiting for a time (what is due waits for a slot, and a slot
  // coming free wakes the dispatcher).
  wakeAt: number | null;
}

export function groupKey(group: { accountId: string; channel: string; target: string }): string {
  return `${group.accountId}\n${group.channel}\n${group.target}`;
}

export function shareOut(input: ShareInput): Share {
  let wakeAt: number | null = null;
  const later = (at: number) => {
    wakeAt = wakeAt === null ? at : Math.min(wakeAt, at);
  };
  const due: Array<{ group: SendGroup; key: string }> = [];
  for (const group of input.groups) {
    if (group.dueAt.getTime() <= input.now) due.push({ group, key: groupKey(group) });
    else later(group.dueAt.getTime());
  }
  due.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  // Round-robin: the groups after the cursor first, then the ones before it.
  const start = input.cursor === undefined ? 0 : due.findIndex(({ key }) => key > input.cursor!);
  const order = start <= 0 ? due : [...due.slice(start), ...due.slice(0, start)];
  let free = input.free;
  const quantum = Math.max(1, Math.ceil(free / Math.max(1, order.length)));
  const picks: Share['picks'] = [];
  let cursor = input.cursor;
  for (const { group, key } of order) {
    if (free <= 0) break;
    const slots = (typeof input.perTarget === 'number' ? input.perTarget : input.perTarget(group)) - input.inFlight(key);
    if (slots <= 0) continue;
    const tokens = input.tokens(group);
    if (tokens < 1) {
      later(input.nextTokenAt(group));
      continue;
    }
    const limit = Math.min(slots, tokens, free, quantum);
    picks.push({ group, key, limit, quantumBound: limit === quantum && limit < slots && limit < tokens });
    free -= limit;
    cursor = key;
  }
  return { picks, cursor, wakeAt };
}
