// A wait's length as a marketer types it (a whole number and a unit) and as the API stores it
// (ISO 8601: PT30M, PT2H, P3D, P1W). The form converts; the API still takes and keeps ISO 8601.

export const DURATION_UNITS = [
  ['minutes', 'Minutes'],
  ['hours', 'Hours'],
  ['days', 'Days'],
  ['weeks', 'Weeks'],
] as const;
export type DurationUnit = (typeof DURATION_UNITS)[number][0];

const MINUTES: Record<DurationUnit, number> = { minutes: 1, hours: 60, days: 1_440, weeks: 10_080 };

export interface Amount {
  amount: number;
  unit: DurationUnit;
}

// Weeks, days, hours, minutes and seconds in whole numbers (P1DT2H, PT90M); months, years and
// fractions are not read here.
const PARTS = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

// The stored duration in the largest unit that divides it exactly (P1DT2H is 26 hours, PT120M
// 2 hours, P14D 2 weeks); null when it is no whole number of minutes (PT90S) or names months or
// years (P1M), which no unit here says exactly.
export function amountOf(iso: string | undefined): Amount | null {
  const parts = iso && iso !== 'P' ? PARTS.exec(iso) : null;
  if (!parts) return null;
  const [weeks, days, hours, minutes, seconds] = parts.slice(1).map((part) => Number(part ?? 0));
  if (seconds % 60 !== 0) return null;
  const total = weeks * MINUTES.weeks + days * MINUTES.days + hours * MINUTES.hours + minutes + seconds / 60;
  if (total === 0) return null;
  const unit = [...DURATION_UNITS].reverse().find(([candidate]) => total % MINUTES[candidate] === 0)![0];
  return { amount: total / MINUTES[unit], unit };
}

// Days and weeks stay calendar units (a P1D wait from 09:00 ends at 09:00 across a clock change);
// minutes and hours are elapsed time, as the engine reads them (src/services/runs/schedule/durations.ts).
export function isoOf({ amount, unit }: Amount): string {
  switch (unit) {
    case 'minutes':
      return `PT${amount}M`;
    case 'hours':
      return `PT${amount}H`;
    case 'days':
      return `P${amount}D`;
    case 'weeks':
      return `P${amount}W`;
  }
}
