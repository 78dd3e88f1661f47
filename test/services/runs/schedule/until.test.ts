import { expect } from 'chai';
import { checkTimeOfDay, nextUntil, type UntilRule } from '../../../../src/services/runs/schedule/until';

function until(from: string, rule: UntilRule, zone: string): string {
  return nextUntil(new Date(from), rule, zone).toISOString();
}

const WORKDAYS: UntilRule['weekdays'] = ['mon', 'tue', 'wed', 'thu', 'fri'];

describe('engine schedule: wait until a time of day', () => {
  describe('nextUntil', () => {
    // Europe/Paris is UTC+1 in January: 09:00 local is 08:00Z. 2027-01-12 is a Tuesday.
    it('ends later the same day when the time is still ahead', () => {
      expect(until('2027-01-12T07:00:00.000Z', { time: '09:00' }, 'Europe/Paris')).to.equal('2027-01-12T08:00:00.000Z');
      expect(until('2027-01-12T07:59:59.999Z', { time: '09:00' }, 'Europe/Paris')).to.equal('2027-01-12T08:00:00.000Z');
    });

    it('ends the next day when the time has passed today', () => {
      expect(until('2027-01-12T09:00:00.000Z', { time: '09:00' }, 'Europe/Paris')).to.equal('2027-01-13T08:00:00.000Z');
    });

    it('ends the next day when the wait starts exactly at the time (strictly after)', () => {
      expect(until('2027-01-12T08:00:00.000Z', { time: '09:00' }, 'Europe/Paris')).to.equal('2027-01-13T08:00:00.000Z');
    });

    it('skips days that are not listed: Friday after the time waits until Monday', () => {
      expect(until('2027-01-15T10:00:00.000Z', { time: '09:00', weekdays: WORKDAYS }, 'Europe/Paris')).to.equal('2027-01-18T08:00:00.000Z');
      expect(until('2027-01-16T06:00:00.000Z', { time: '09:00', weekdays: WORKDAYS }, 'Europe/Paris')).to.equal('2027-01-18T08:00:00.000Z');
    });

    it('waits a full week for a single weekday that has just passed', () => {
      expect(until('2027-01-13T09:00:00.000Z', { time: '09:00', weekdays: ['wed'] }, 'Europe/Paris')).to.equal('2027-01-20T08:00:00.000Z');
    });

    it('treats an empty weekday list as every day', () => {
      expect(until('2027-01-16T09:00:00.000Z', { time: '09:00', weekdays: [] }, 'Europe/Paris')).to.equal('2027-01-17T08:00:00.000Z');
    });

    it('reads the day and time in America/New_York, not in UTC', () => {
      // 03:00Z on Tuesday 2027-01-12 is 22:00 on Monday in New York (UTC-5).
      expect(until('2027-01-12T03:00:00.000Z', { time: '23:00' }, 'America/New_York')).to.equal('2027-01-12T04:00:00.000Z');
      expect(until('2027-01-12T03:00:00.000Z', { time: '23:00', weekdays: ['mon'] }, 'America/New_York')).to.equal(
        '2027-01-12T04:00:00.000Z',
      );
      // In summer New York is UTC-4: 12:00Z is 08:00 local, an hour before 09:00.
      expect(until('2027-07-06T12:00:00.000Z', { time: '09:00' }, 'America/New_York')).to.equal('2027-07-06T13:00:00.000Z');
    });

    it('handles the half-hour offset of Asia/Kolkata (UTC+5:30)', () => {
      expect(until('2027-01-12T00:00:00.000Z', { time: '09:00' }, 'Asia/Kolkata')).to.equal('2027-01-12T03:30:00.000Z');
      // 18:30Z on the 11th is midnight on the 12th in Kolkata.
      expect(until('2027-01-11T18:30:00.000Z', { time: '00:15' }, 'Asia/Kolkata')).to.equal('2027-01-11T18:45:00.000Z');
    });

    it('keeps 09:00 local across the spring-forward change', () => {
      expect(until('2027-03-27T09:00:00.000Z', { time: '09:00' }, 'Europe/Paris')).to.equal('2027-03-28T07:00:00.000Z');
    });

    it('ends a time skipped by spring-forward at the end of the gap: 02:30 in Paris on 2027-03-28 is 03:00 local (01:00Z)', () => {
      // The clock jumps from 02:00 CET (01:00Z) to 03:00 CEST: 02:30 never happens that day.
      expect(until('2027-03-27T12:00:00.000Z', { time: '02:30' }, 'Europe/Paris')).to.equal('2027-03-28T01:00:00.000Z');
      // Every time inside the gap ends at the same instant, 02:00 (the gap's first minute) too.
      expect(until('2027-03-27T12:00:00.000Z', { time: '02:00' }, 'Europe/Paris')).to.equal('2027-03-28T01:00:00.000Z');
      expect(until('2027-03-27T12:00:00.000Z', { time: '02:59' }, 'Europe/Paris')).to.equal('2027-03-28T01:00:00.000Z');
      // 03:00 exists: it is that same instant, read on the clock after the jump.
      expect(until('2027-03-27T12:00:00.000Z', { time: '03:00' }, 'Europe/Paris')).to.equal('2027-03-28T01:00:00.000Z');
      // The next day 02:30 exists again, now at UTC+2.
      expect(until('2027-03-28T01:00:00.000Z', { time: '02:30' }, 'Europe/Paris')).to.equal('2027-03-29T00:30:00.000Z');
    });

    it('ends a gap time at the end of the gap in New York too, and only on the listed weekday', () => {
      // 2027-03-14 (a Sunday): 02:00 EST (07:00Z) jumps to 03:00 EDT.
      expect(until('2027-03-13T12:00:00.000Z', { time: '02:15' }, 'America/New_York')).to.equal('2027-03-14T07:00:00.000Z');
      // Sundays only, from a moment after that gap: the next Sunday's 02:15 exists (EDT).
      expect(until('2027-03-14T07:00:00.000Z', { time: '02:15', weekdays: ['sun'] }, 'America/New_York')).to.equal('2027-03-21T06:15:00.000Z');
      // A wait that starts inside the gap's instant (exactly its end) waits for the next day's time.
      expect(until('2027-03-14T07:00:00.000Z', { time: '02:15' }, 'America/New_York')).to.equal('2027-03-15T06:15:00.000Z');
    });

    it('ends at the first occurrence of a time the fall-back change repeats: 01:30 in New York on 2027-11-07 is 05:30Z', () => {
      expect(until('2027-11-06T12:00:00.000Z', { time: '01:30' }, 'America/New_York')).to.equal('2027-11-07T05:30:00.000Z');
      expect(until('2027-10-30T12:00:00.000Z', { time: '02:30' }, 'Europe/Paris')).to.equal('2027-10-31T00:30:00.000Z');
    });

    it('does not end again at the second occurrence of a repeated time: the next one is the following day', () => {
      // 05:45Z is 01:45 EDT, between the 01:30 EDT and the 01:30 EST of 2027-11-07.
      expect(until('2027-11-07T05:45:00.000Z', { time: '01:30' }, 'America/New_York')).to.equal('2027-11-08T06:30:00.000Z');
    });

    it("gives the same answer whatever the server's own zone is", () => {
      const serverZone = process.env.TZ;
      process.env.TZ = 'Pacific/Auckland';
      try {
        expect(until('2027-01-12T07:00:00.000Z', { time: '09:00' }, 'Europe/Paris')).to.equal('2027-01-12T08:00:00.000Z');
        expect(until('2027-01-12T07:00:00.000Z', { time: '09:00' }, 'UTC')).to.equal('2027-01-12T09:00:00.000Z');
      } finally {
        if (serverZone === undefined) delete process.env.TZ;
        else process.env.TZ = serverZone;
      }
    });
  });

  describe('checkTimeOfDay', () => {
    it('accepts HH:MM from 00:00 to 23:59', () => {
      for (const text of ['00:00', '09:00', '12:30', '23:59']) expect(checkTimeOfDay(text), text).to.deep.equal({ ok: true });
    });

    it('accepts 24:00 only when allowed', () => {
      expect(checkTimeOfDay('24:00', true)).to.deep.equal({ ok: true });
      expect(checkTimeOfDay('24:00')).to.deep.equal({ ok: false, message: '24:00 is not a time of day from 00:00 to 23:59' });
      expect(checkTimeOfDay('24:30', true)).to.deep.equal({ ok: false, message: '24:30 is not a time of day from 00:00 to 24:00' });
    });

    it('refuses hours or minutes out of range', () => {
      expect(checkTimeOfDay('23:60')).to.deep.equal({ ok: false, message: '23:60 is not a time of day from 00:00 to 23:59' });
      expect(checkTimeOfDay('25:00').ok).to.equal(false);
    });

    it('refuses anything not written as two digits, a colon and two digits, naming the value', () => {
      expect(checkTimeOfDay('9:00')).to.deep.equal({ ok: false, message: '"9:00" is not a time of day written HH:MM (e.g. 09:00, 17:30)' });
      for (const text of ['ab:cd', '', '09:00:00', ' 09:00', '0900', '09h00', '٠٩:٠٠']) {
        const result = checkTimeOfDay(text);
        expect(result.ok, text).to.equal(false);
        if (!result.ok) expect(result.message).to.contain(JSON.stringify(text));
      }
      expect(checkTimeOfDay(900 as unknown as string).ok).to.equal(false);
    });
  });
});
