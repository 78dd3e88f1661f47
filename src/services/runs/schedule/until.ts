import { DateTime } from 'luxon';
import { allowedWeekdayNumbers, type Weekday } from './weekdays';
import { firstInstantAtOrAfter } from './zones';

// `wait.until`: wait until the local clock next reads a time of day, optionally only on some
// weekdays, always strictly after the wait starts (a contact arriving at 09:00 for "until 09:00"
// waits a day, so a loop through the step cannot run twice in the same minute).
// Daylight saving, read in the run's zone:
// - A time the clock skips when it springs forward (02:30 in Europe/Paris on the last Sunday of
//   March) happens at the end of the gap, when the clock jumps: 03:00 local (docs/sequences.md),
//   as a sending window opening in the gap does, and not 03:30 as luxon would shift it.
// - A time the clock reads twice when it falls back (01:30 in America/New_York on the first Sunday
//   of November) happens at its first occurrence only, so the step fires once that day.
export interface UntilRule {
  time: string; // 'HH:MM', 00:00-23:59
  weekdays?: Weekday[];
}

const TIME_OF_DAY = /^(\d{2}):(\d{2})$/;

export function checkTimeOfDay(text: string, allow24 = false): { ok: true } | { ok: false; message: string } {
  const match = typeof text === 'string' ? TIME_OF_DAY.exec(text) : null;
  if (!match) {
    return { ok: false, message: `${JSON.stringify(text)} is not a time of day written HH:MM (e.g. 09:00, 17:30)` };
  }
  const [hour, minute] = [Number(match[1]), Number(match[2])];
  if (allow24 && hour === 24 && minute === 0) return { ok: true };
  if (hour > 23 || minute > 59) {
    const range = allow24 ? '00:00 to 24:00' : '00:00 to 23:59';
    return { ok: false, message: `${text} is not a time of day from ${range}` };
  }
  return { ok: true };
}

// Minutes since local midnight for an 'HH:MM' that checkTimeOfDay accepted ('24:00' is 1440).
export function minuteOfDay(text: string): number {
  const [hour, minute] = text.split(':').map(Number);
  return hour * 60 + minute;
}

// Two weeks covers any weekday list even if the one allowed day's time falls in a gap.
const SEARCH_DAYS = 15;

export function nextUntil(from: Date, rule: UntilRule, zone: string): Date {
  const days = allowedWeekdayNumbers(rule.weekdays);
  const minutes = minuteOfDay(rule.time);
  const start = DateTime.fromJSDate(from, { zone });
  // From the day before: where the clock falls back across midnight, the start's local date
  // reads a day ahead of a time still to come.
  for (let i = -1; i <= SEARCH_DAYS; i++) {
    const date = DateTime.utc(start.year, start.month, start.day).plus({ days: i });
    if (!days.has(date.weekday)) continue;
    const local = { year: date.year, month: date.month, day: date.day, hour: Math.floor(minutes / 60), minute: minutes % 60 };
    const at = firstInstantAtOrAfter(local, zone);
    if (at.getTime() > from.getTime()) return at;
  }
  throw new Error(`no ${rule.time} in ${zone} within ${SEARCH_DAYS} days of ${from.toISOString()}`);
}
