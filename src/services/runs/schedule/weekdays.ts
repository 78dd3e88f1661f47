// Weekdays as a sequence definition names them, and luxon's numbering of them (ISO 8601:
// 1 = Monday ... 7 = Sunday), which is what a DateTime's `weekday` reads in any zone.
import { WEEKDAYS, type Weekday } from '../../../schemas/sequence-definition';

export { WEEKDAYS, type Weekday };

export function isWeekday(value: unknown): value is Weekday {
  return typeof value === 'string' && (WEEKDAYS as readonly string[]).includes(value);
}

export function weekdayNumber(day: Weekday): number {
  return WEEKDAYS.indexOf(day) + 1;
}

export function weekdayFromNumber(n: number): Weekday {
  const day = WEEKDAYS[n - 1];
  if (day === undefined) throw new RangeError(`${n} is not a weekday number (1 = Monday ... 7 = Sunday)`);
  return day;
}

// The luxon weekday numbers a rule allows. No list, or an empty one, allows every day: a rule
// that names no day has not restricted anything (definitions reject the empty list earlier).
export function allowedWeekdayNumbers(days: readonly Weekday[] | undefined): Set<number> {
  const chosen = days && days.length > 0 ? days : WEEKDAYS;
  return new Set(chosen.map(weekdayNumber));
}
