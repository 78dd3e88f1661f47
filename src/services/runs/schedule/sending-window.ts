import { DateTime, IANAZone } from 'luxon';
import { checkTimeOfDay, minuteOfDay } from './until';
import { repeatedWeekdayMessage } from '../../../schemas/sequence-definition';
import { allowedWeekdayNumbers, isWeekday, WEEKDAYS, type Weekday } from './weekdays';
import { instantsAtLocalTime, isValidTimeZone, type ZoneRule } from './zones';

// A sequence's sending window: steps that reach the contact (tag, update, webhook, email) run
// only while the local clock in the run's zone reads a time from `from` (inclusive) to `to`
// (exclusive) on an allowed weekday; a step due outside it waits for the next opening. The hours
// are wall-clock hours: 09:00 in Europe/Paris is 08:00Z in winter and 07:00Z in summer.
// A window does not run past midnight, so each opening belongs to one day and its weekday.
// Daylight saving follows from reading the clock: a window opening in a spring-forward gap opens
// when the clock jumps past it (end of the gap), and a clock set back into a window reopens it.
export interface WindowRule extends ZoneRule {
  weekdays?: Weekday[];
  from?: string; // 'HH:MM'
  to?: string; // 'HH:MM' or '24:00'
}

type WindowCheck = { ok: true } | { ok: false; path: string; message: string };

export function checkWindow(rule: WindowRule): WindowCheck {
  if (!isValidTimeZone(rule.timeZone)) {
    return fail('timeZone', `${JSON.stringify(rule.timeZone ?? '')} is not an IANA time zone (e.g. Europe/Paris, America/New_York)`);
  }
  if (rule.weekdays !== undefined) {
    if (!Array.isArray(rule.weekdays) || rule.weekdays.length === 0) {
      return fail('weekdays', `name at least one weekday (${WEEKDAYS.join(', ')}), or leave weekdays out for every day`);
    }
    const wrong = rule.weekdays.find((day) => !isWeekday(day));
    if (wrong !== undefined) return fail('weekdays', `${JSON.stringify(wrong)} is not a weekday (${WEEKDAYS.join(', ')})`);
    const repeated = rule.weekdays.findIndex((day, i) => rule.weekdays!.indexOf(day) !== i);
    if (repeated >= 0) return fail(`weekdays.${repeated}`, repeatedWeekdayMessage(rule.weekdays[repeated]!));
  }
  if ((rule.from === undefined) !== (rule.to === undefined)) {
    const missing = rule.from === undefined ? 'from' : 'to';
    return fail(missing, 'give both from and to, or neither for the whole day');
  }
  if (rule.from === undefined || rule.to === undefined) return { ok: true };
  const from = checkTimeOfDay(rule.from);
  if (!from.ok) return fail('from', from.message);
  const to = checkTimeOfDay(rule.to, true);
  if (!to.ok) return fail('to', to.message);
  if (minuteOfDay(rule.from) >= minuteOfDay(rule.to)) {
    return fail('to', `to (${rule.to}) must be later than from (${rule.from}): a window cannot run past midnight`);
  }
  return { ok: true };
}

function fail(path: string, message: string): WindowCheck {
  return { ok: false, path, message };
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
// A week and a day finds nearly every opening; two weeks covers a one-day window whose hours a
// spring-forward gap swallows that week.
const SEARCH_DAYS = [8, 15];

interface OpenHours {
  days: Set<number>;
  fromMs: number; // since local midnight
  toMs: number;
}

function openHours(rule: WindowRule): OpenHours {
  return {
    days: allowedWeekdayNumbers(rule.weekdays),
    fromMs: rule.from === undefined ? 0 : minuteOfDay(rule.from) * MINUTE_MS,
    toMs: rule.to === undefined ? 24 * HOUR_MS : minuteOfDay(rule.to) * MINUTE_MS,
  };
}

function isOpen(at: number, hours: OpenHours, zone: string): boolean {
  const local = DateTime.fromMillis(at, { zone });
  const sinceMidnight = ((local.hour * 60 + local.minute) * 60 + local.second) * 1000 + local.millisecond;
  return hours.days.has(local.weekday) && sinceMidnight >= hours.fromMs && sinceMidnight < hours.toMs;
}

export function isInsideWindow(at: Date, rule: WindowRule, zone: string): boolean {
  return isOpen(at.getTime(), openHours(rule), zone);
}

export function nextOpening(at: Date, rule: WindowRule, zone: string): Date {
  const hours = openHours(rule);
  const start = at.getTime();
  if (isOpen(start, hours, zone)) return at;
  for (const days of SEARCH_DAYS) {
    // The window can only open when the clock reaches `from`, or when it jumps (a change of
    // offset) into the window's hours; the first such moment that is open is the next opening.
    const candidates = [...fromReadings(at, hours, zone, days), ...offsetChanges(start, start + (days + 1) * DAY_MS, zone)];
    const opening = candidates.filter((c) => c > start && isOpen(c, hours, zone)).sort((a, b) => a - b)[0];
    if (opening !== undefined) return new Date(opening);
  }
  throw new Error(`the sending window in ${zone} does not open within ${SEARCH_DAYS.at(-1)} days of ${at.toISOString()}`);
}

function fromReadings(at: Date, hours: OpenHours, zone: string, days: number): number[] {
  const start = DateTime.fromJSDate(at, { zone });
  const minutes = hours.fromMs / MINUTE_MS;
  const readings: number[] = [];
  for (let i = 0; i <= days; i++) {
    const date = DateTime.utc(start.year, start.month, start.day).plus({ days: i });
    if (!hours.days.has(date.weekday)) continue;
    const local = { year: date.year, month: date.month, day: date.day, hour: Math.floor(minutes / 60), minute: minutes % 60 };
    readings.push(...instantsAtLocalTime(local, zone).map((d) => d.getTime()));
  }
  return readings;
}

// The instants in [from, to] at which the zone's offset changes. Zones change offset at most a
// few times a year, never twice within hours, so sampling every 6 hours finds each change.
const SAMPLE_MS = 6 * HOUR_MS;

function offsetChanges(from: number, to: number, zone: string): number[] {
  const tz = IANAZone.create(zone);
  const changes: number[] = [];
  let offset = tz.offset(from);
  for (let t = from; t < to; t += SAMPLE_MS) {
    const nextOffset = tz.offset(t + SAMPLE_MS);
    if (nextOffset !== offset) {
      let [lo, hi] = [t, t + SAMPLE_MS];
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (tz.offset(mid) === offset) lo = mid;
        else hi = mid;
      }
      changes.push(hi);
    }
    offset = nextOffset;
  }
  return changes;
}
