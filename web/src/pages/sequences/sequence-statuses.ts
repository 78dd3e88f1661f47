export const SEQUENCE_STATUSES = [
  ['draft', 'Draft'],
  ['active', 'Active'],
  ['paused', 'Paused'],
  ['archived', 'Archived'],
] as const;
export type SequenceStatus = (typeof SEQUENCE_STATUSES)[number][0];
