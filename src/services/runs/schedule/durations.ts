import { DateTime, Duration } from 'luxon';

// How long a `wait.duration` step waits, written as an ISO 8601 duration (PT2H, P3D, P1W, P1M).
// Between 1 second and 366 days, judged with luxon's casual lengths (a month is 30 days, a year
// 365), so P12M and P1Y pass and P2Y does not. Waits only go forward: luxon reads "PT-1H" and
// "-P1D" as negative durations, and a definition with a minus sign anywhere is refused.
// Days, weeks, months and years are calendar units in the run's zone, so a P1D wait that starts at
// 09:00 ends at 09:00 the next day even across a daylight-saving change; hours, minutes and
// seconds are exact elapsed time, so PT24H is always 24 real hours.
export const MIN_WAIT_MS = 1_000; // PT1S
export const MAX_WAIT_MS = 366 * 86_400_000; // about a year

const EXAMPLES = 'e.g. PT2H, P3D';

export function checkDuration(text: string): { ok: true } | { ok: false; message: string } {
  if (typeof text !== 'string') return notIso(String(text));
  const duration = Duration.fromISO(text);
  // luxon accepts "P", "PT" and "P1DT", which ISO 8601 does not: a duration names at least one
  // part, and a T is followed by at least one time part.
  if (!duration.isValid || Object.keys(duration.toObject()).length === 0 || text.endsWith('T')) {
    return notIso(text);
  }
  if (text.includes('-')) {
    return { ok: false, message: `${text} has a negative part: a wait can only go forward (${EXAMPLES})` };
  }
  const ms = duration.toMillis();
  if (!(ms >= MIN_WAIT_MS)) return { ok: false, message: `${text} is not a duration of at least 1 second` };
  if (ms > MAX_WAIT_MS) return { ok: false, message: `${text} is more than 366 days` };
  return { ok: true };
}

function notIso(text: string): { ok: false; message: string } {
  return { ok: false, message: `${JSON.stringify(text)} is not an ISO 8601 duration (${EXAMPLES})` };
}

// A calendar date that the sum does not have (P1M from 31 January) is clamped to the month's last
// day by luxon; a local time that a spring-forward change skips moves forward by the gap.
export function addDuration(from: Date, text: string, zone: string): Date {
  return DateTime.fromJSDate(from, { zone }).plus(Duration.fromISO(text)).toJSDate();
}
