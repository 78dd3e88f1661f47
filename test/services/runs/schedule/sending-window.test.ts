import { expect } from 'chai';
import { checkWindow, isInsideWindow, nextOpening, type WindowRule } from '../../../../src/services/runs/schedule/sending-window';

function opening(at: string, rule: WindowRule, zone = rule.timeZone): string {
  return nextOpening(new Date(at), rule, zone).toISOString();
}

// 09:00-17:00 on working days in Paris (UTC+1 in January, UTC+2 in summer).
// 2027-01-12 is a Tuesday, 2027-01-15 a Friday, 2027-01-18 a Monday.
const OFFICE: WindowRule = { timeZone: 'Europe/Paris', weekdays: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' };

describe('engine schedule: sending window', () => {
  describe('nextOpening', () => {
    it('returns the instant itself when the window is open', () => {
      const at = new Date('2027-01-12T10:00:00.000Z');
      expect(nextOpening(at, OFFICE, 'Europe/Paris').toISOString()).to.equal('2027-01-12T10:00:00.000Z');
      expect(isInsideWindow(at, OFFICE, 'Europe/Paris')).to.equal(true);
    });

    it('counts the opening time as inside and the closing time as outside', () => {
      expect(opening('2027-01-12T08:00:00.000Z', OFFICE)).to.equal('2027-01-12T08:00:00.000Z');
      expect(opening('2027-01-12T15:59:59.999Z', OFFICE)).to.equal('2027-01-12T15:59:59.999Z');
      expect(opening('2027-01-12T16:00:00.000Z', OFFICE)).to.equal('2027-01-13T08:00:00.000Z');
    });

    it("waits for today's opening before it", () => {
      expect(opening('2027-01-12T05:00:00.000Z', OFFICE)).to.equal('2027-01-12T08:00:00.000Z');
    });

    it("waits for the next day's opening after closing", () => {
      expect(opening('2027-01-12T17:00:00.000Z', OFFICE)).to.equal('2027-01-13T08:00:00.000Z');
    });

    it("waits from Friday evening to Monday's opening", () => {
      expect(opening('2027-01-15T18:00:00.000Z', OFFICE)).to.equal('2027-01-18T08:00:00.000Z');
      expect(opening('2027-01-16T12:00:00.000Z', OFFICE)).to.equal('2027-01-18T08:00:00.000Z');
    });

    it('reads wall-clock hours: 09:00 in Paris is 08:00Z in January and 07:00Z in July', () => {
      expect(opening('2027-01-12T05:00:00.000Z', OFFICE)).to.equal('2027-01-12T08:00:00.000Z');
      // 2027-07-06 is a Tuesday.
      expect(opening('2027-07-06T05:00:00.000Z', OFFICE)).to.equal('2027-07-06T07:00:00.000Z');
      expect(isInsideWindow(new Date('2027-07-06T07:30:00.000Z'), OFFICE, 'Europe/Paris')).to.equal(true);
      expect(isInsideWindow(new Date('2027-01-12T07:30:00.000Z'), OFFICE, 'Europe/Paris')).to.equal(false);
    });

    it('uses the zone it is given (the run zone), not the rule zone', () => {
      // 2027-01-12T14:00Z is 15:00 in Paris but 09:00 in New York.
      expect(opening('2027-01-12T13:00:00.000Z', OFFICE, 'America/New_York')).to.equal('2027-01-12T14:00:00.000Z');
    });

    it('reads the weekday in the zone: Friday 21:00 in New York is Saturday in UTC', () => {
      expect(opening('2027-01-16T02:00:00.000Z', OFFICE, 'America/New_York')).to.equal('2027-01-18T14:00:00.000Z');
    });

    it('keeps a window open until midnight when it ends at 24:00', () => {
      const evening: WindowRule = { timeZone: 'Europe/Paris', from: '20:00', to: '24:00' };
      expect(opening('2027-01-12T22:59:59.999Z', evening)).to.equal('2027-01-12T22:59:59.999Z');
      // Midnight in Paris belongs to the next day, before its 20:00 opening.
      expect(opening('2027-01-12T23:00:00.000Z', evening)).to.equal('2027-01-13T19:00:00.000Z');
    });

    it('opens all day on the listed weekdays when there are no hours', () => {
      const weekend: WindowRule = { timeZone: 'Europe/Paris', weekdays: ['sat', 'sun'] };
      expect(opening('2027-01-15T22:59:59.000Z', weekend)).to.equal('2027-01-15T23:00:00.000Z');
      expect(opening('2027-01-16T12:00:00.000Z', weekend)).to.equal('2027-01-16T12:00:00.000Z');
      expect(opening('2027-01-17T22:59:59.999Z', weekend)).to.equal('2027-01-17T22:59:59.999Z');
      expect(opening('2027-01-17T23:00:00.000Z', weekend)).to.equal('2027-01-22T23:00:00.000Z');
    });

    it('opens every day when no weekday is listed', () => {
      const hours: WindowRule = { timeZone: 'Europe/Paris', from: '09:00', to: '17:00' };
      expect(opening('2027-01-16T17:00:00.000Z', hours)).to.equal('2027-01-17T08:00:00.000Z');
    });

    it('is always open with neither hours nor weekdays', () => {
      expect(opening('2027-01-17T03:21:00.000Z', { timeZone: 'UTC' })).to.equal('2027-01-17T03:21:00.000Z');
    });

    it('opens at the end of a spring-forward gap when the opening time is in it', () => {
      // In Paris on 2027-03-28 the clock jumps from 02:00 CET (01:00Z) to 03:00 CEST.
      const night: WindowRule = { timeZone: 'Europe/Paris', from: '02:30', to: '04:00' };
      expect(opening('2027-03-27T23:00:00.000Z', night)).to.equal('2027-03-28T01:00:00.000Z');
      // New York, 2027-03-14: 02:00 EST (07:00Z) jumps to 03:00 EDT; a 02:15 opening is 03:00 EDT,
      // the same instant a wait until 02:15 ends (until.test.ts).
      const early: WindowRule = { timeZone: 'America/New_York', weekdays: ['sun'], from: '02:15', to: '05:00' };
      expect(opening('2027-03-14T05:00:00.000Z', early)).to.equal('2027-03-14T07:00:00.000Z');
    });

    it('skips a day whose window the spring-forward gap swallows whole', () => {
      const gap: WindowRule = { timeZone: 'Europe/Paris', from: '02:00', to: '02:45' };
      expect(opening('2027-03-27T23:00:00.000Z', gap)).to.equal('2027-03-29T00:00:00.000Z');
      // Sundays only: the 28 March window does not happen, so the next is two weeks on.
      expect(opening('2027-03-21T03:00:00.000Z', { ...gap, weekdays: ['sun'] })).to.equal('2027-04-04T00:00:00.000Z');
    });

    it('opens again when the fall-back change sets the clock back into the window', () => {
      // New York, 2027-11-07: 01:59:59 EDT (05:59:59Z) is followed by 01:00 EST (06:00Z).
      const late: WindowRule = { timeZone: 'America/New_York', from: '01:30', to: '03:00' };
      expect(opening('2027-11-07T05:00:00.000Z', late)).to.equal('2027-11-07T05:30:00.000Z');
      // 01:10 EST: outside again, until the clock reads 01:30 for the second time.
      expect(opening('2027-11-07T06:10:00.000Z', late)).to.equal('2027-11-07T06:30:00.000Z');
      const early: WindowRule = { timeZone: 'America/New_York', from: '00:00', to: '01:30' };
      // 01:45 EDT is past closing; the clock then goes back to 01:00, inside the window.
      expect(opening('2027-11-07T05:45:00.000Z', early)).to.equal('2027-11-07T06:00:00.000Z');
    });

    it('reads the half-hour offset of Asia/Kolkata', () => {
      expect(opening('2027-01-12T00:00:00.000Z', { ...OFFICE, timeZone: 'Asia/Kolkata' })).to.equal('2027-01-12T03:30:00.000Z');
    });
  });

  describe('checkWindow', () => {
    it('accepts a full window, a whole-day window, and weekdays alone', () => {
      expect(checkWindow(OFFICE)).to.deep.equal({ ok: true });
      expect(checkWindow({ timeZone: 'UTC' })).to.deep.equal({ ok: true });
      expect(checkWindow({ timeZone: 'UTC', weekdays: ['sat'] })).to.deep.equal({ ok: true });
      expect(checkWindow({ timeZone: 'UTC', from: '20:00', to: '24:00' })).to.deep.equal({ ok: true });
      expect(checkWindow({ timeZone: 'UTC', from: '00:00', to: '00:01', useContactTimeZone: true })).to.deep.equal({ ok: true });
    });

    it('refuses an empty weekday list', () => {
      expect(checkWindow({ timeZone: 'UTC', weekdays: [] })).to.deep.equal({
        ok: false,
        path: 'weekdays',
        message: 'name at least one weekday (mon, tue, wed, thu, fri, sat, sun), or leave weekdays out for every day',
      });
    });

    it('refuses an unknown weekday, naming it', () => {
      const rule = { timeZone: 'UTC', weekdays: ['monday'] } as unknown as WindowRule;
      expect(checkWindow(rule)).to.deep.equal({
        ok: false,
        path: 'weekdays',
        message: '"monday" is not a weekday (mon, tue, wed, thu, fri, sat, sun)',
      });
    });

    it('refuses a weekday listed twice, naming where it repeats', () => {
      expect(checkWindow({ timeZone: 'UTC', weekdays: ['fri', 'sat', 'sat'] })).to.deep.equal({
        ok: false,
        path: 'weekdays.2',
        message: '"sat" is listed twice: name each weekday once',
      });
    });

    it('refuses a time zone that is not an IANA name', () => {
      expect(checkWindow({ timeZone: 'Mars/Olympus' })).to.deep.equal({
        ok: false,
        path: 'timeZone',
        message: '"Mars/Olympus" is not an IANA time zone (e.g. Europe/Paris, America/New_York)',
      });
      expect(checkWindow({ timeZone: 'UTC+1' })).to.include({ ok: false, path: 'timeZone' });
      expect(checkWindow({} as WindowRule)).to.include({ ok: false, path: 'timeZone' });
    });

    it('needs both from and to, naming the missing one', () => {
      expect(checkWindow({ timeZone: 'UTC', from: '09:00' })).to.deep.equal({
        ok: false,
        path: 'to',
        message: 'give both from and to, or neither for the whole day',
      });
      expect(checkWindow({ timeZone: 'UTC', to: '17:00' })).to.include({ ok: false, path: 'from' });
    });

    it('refuses a window that does not end after it starts (no overnight windows)', () => {
      expect(checkWindow({ timeZone: 'UTC', from: '17:00', to: '09:00' })).to.deep.equal({
        ok: false,
        path: 'to',
        message: 'to (09:00) must be later than from (17:00): a window cannot run past midnight',
      });
      expect(checkWindow({ timeZone: 'UTC', from: '09:00', to: '09:00' })).to.include({ ok: false, path: 'to' });
    });

    it('refuses badly written times, 24:00 included as an opening', () => {
      expect(checkWindow({ timeZone: 'UTC', from: '9:00', to: '17:00' })).to.deep.equal({
        ok: false,
        path: 'from',
        message: '"9:00" is not a time of day written HH:MM (e.g. 09:00, 17:30)',
      });
      expect(checkWindow({ timeZone: 'UTC', from: '24:00', to: '24:00' })).to.include({ ok: false, path: 'from' });
      expect(checkWindow({ timeZone: 'UTC', from: '09:00', to: '24:01' })).to.include({ ok: false, path: 'to' });
    });
  });
});
