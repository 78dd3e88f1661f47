import { IANAZone } from 'luxon';

// Which zone a run's local times (wait.until, sending windows) are read in. A sequence names one
// zone; it may instead ask for each contact's own, kept in a custom field, and falls back to the
// sequence's zone when a contact has none or an unusable one, so a bad import never stops a run.
// Only IANA names count: fixed offsets such as "UTC+1" do not follow a place's daylight saving.
export const CONTACT_TIME_ZONE_FIELD = 'timeZone';

// A name, never an offset: Node 24's ICU accepts "+01:00" as a zone too, which would make the
// same definition valid on one Node and refused on another. An IANA name starts with a letter.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/;

export function isValidTimeZone(name: unknown): name is string {
  return typeof name === 'string' && ZONE_NAME.test(name) && IANAZone.isValidZone(name);
}

export interface ZoneRule {
  timeZone: string;
  useContactTimeZone?: boolean;
}

export function runTimeZone(rule: ZoneRule | null | undefined, customFields: Record<string, unknown>): string {
  if (!rule) return 'UTC';
  const own = customFields?.[CONTACT_TIME_ZONE_FIELD];
  return rule.useContactTimeZone && isValidTimeZone(own) ? own : rule.timeZone;
}

export interface LocalDateTime {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
}

const DAY_MS = 86_400_000;

// Every instant at which the clock in `zone` reads `local`, earliest first: one on most days,
// two when the clock is set back and the hour repeats, none when it is set forward past it.
// luxon alone picks one of the two repeated instants, and not always the first.
export function instantsAtLocalTime(local: LocalDateTime, zone: string): Date[] {
  const tz = IANAZone.create(zone);
  const wall = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute);
  // The instant is within 14 hours of the wall reading taken as UTC, so with at most one change
  // of offset in the surrounding two days, its offset is one of these.
  const offsets = new Set([tz.offset(wall - DAY_MS), tz.offset(wall), tz.offset(wall + DAY_MS)]);
  const instants = [...offsets].map((offset) => wall - offset * 60_000).filter((at) => wall - tz.offset(at) * 60_000 === at);
  return [...new Set(instants)].sort((a, b) => a - b).map((at) => new Date(at));
}

// The first instant at which the clock in `zone` reads `local` or later that day: the instant
// itself on most days (the first of two when the hour repeats), and for a time that the clock
// skips when it springs forward, the end of the gap (02:30 in a 02:00-03:00 gap is 03:00 local,
// the instant the clock jumps), as peers schedule it.
export function firstInstantAtOrAfter(local: LocalDateTime, zone: string): Date {
  const [first] = instantsAtLocalTime(local, zone);
  if (first) return first;
  const tz = IANAZone.create(zone);
  const wall = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute);
  const [before, after] = [tz.offset(wall - DAY_MS), tz.offset(wall + DAY_MS)];
  // Read with the offset after the change, the time falls before the jump; with the one before
  // it, after the jump: the jump lies between, and is the one change of offset there.
  let [lo, hi] = [wall - after * 60_000, wall - before * 60_000];
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (tz.offset(mid) === before) lo = mid;
    else hi = mid;
  }
  return new Date(hi);
}
