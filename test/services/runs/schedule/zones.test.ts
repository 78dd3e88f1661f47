import { expect } from 'chai';
import {
  CONTACT_TIME_ZONE_FIELD,
  firstInstantAtOrAfter,
  instantsAtLocalTime,
  isValidTimeZone,
  runTimeZone,
} from '../../../../src/services/runs/schedule/zones';

describe('engine schedule: time zones', () => {
  describe('isValidTimeZone', () => {
    it('accepts IANA zone names, UTC included', () => {
      for (const name of ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata']) expect(isValidTimeZone(name), name).to.equal(true);
    });

    it('refuses fixed offsets, made-up places and values that are not strings', () => {
      for (const name of ['', 'CET+1', 'UTC+1', '+01:00', 'Mars/Olympus', 'Europe/Paris ', 42, null, undefined, {}]) {
        expect(isValidTimeZone(name), String(name)).to.equal(false);
      }
    });
  });

  describe('runTimeZone', () => {
    const rule = { timeZone: 'Europe/Paris', useContactTimeZone: true };

    it("reads a contact's own zone from the timeZone custom field when the rule asks for it", () => {
      expect(CONTACT_TIME_ZONE_FIELD).to.equal('timeZone');
      expect(runTimeZone(rule, { timeZone: 'America/New_York' })).to.equal('America/New_York');
    });

    it("falls back to the sequence's zone when the contact has none", () => {
      expect(runTimeZone(rule, {})).to.equal('Europe/Paris');
    });

    it("falls back to the sequence's zone when the contact's is not a valid zone", () => {
      expect(runTimeZone(rule, { timeZone: 'Mars/Olympus' })).to.equal('Europe/Paris');
      expect(runTimeZone(rule, { timeZone: '' })).to.equal('Europe/Paris');
      expect(runTimeZone(rule, { timeZone: 1 })).to.equal('Europe/Paris');
      expect(runTimeZone(rule, { timeZone: { name: 'America/New_York' } })).to.equal('Europe/Paris');
    });

    it("ignores the contact's zone unless the rule asks for it", () => {
      expect(runTimeZone({ timeZone: 'Europe/Paris', useContactTimeZone: false }, { timeZone: 'Asia/Kolkata' })).to.equal('Europe/Paris');
      expect(runTimeZone({ timeZone: 'Europe/Paris' }, { timeZone: 'Asia/Kolkata' })).to.equal('Europe/Paris');
    });

    it('uses UTC when there is no rule at all', () => {
      expect(runTimeZone(null, { timeZone: 'Asia/Kolkata' })).to.equal('UTC');
      expect(runTimeZone(undefined, {})).to.equal('UTC');
    });
  });

  describe('instantsAtLocalTime', () => {
    const isos = (dates: Date[]) => dates.map((d) => d.toISOString());

    it('finds the one instant of an ordinary local time', () => {
      expect(isos(instantsAtLocalTime({ year: 2027, month: 1, day: 12, hour: 9, minute: 0 }, 'Europe/Paris'))).to.deep.equal([
        '2027-01-12T08:00:00.000Z',
      ]);
      expect(isos(instantsAtLocalTime({ year: 2027, month: 1, day: 12, hour: 9, minute: 0 }, 'Asia/Kolkata'))).to.deep.equal([
        '2027-01-12T03:30:00.000Z',
      ]);
    });

    it('finds both instants, earliest first, of a time the fall-back change repeats', () => {
      expect(isos(instantsAtLocalTime({ year: 2027, month: 11, day: 7, hour: 1, minute: 30 }, 'America/New_York'))).to.deep.equal([
        '2027-11-07T05:30:00.000Z',
        '2027-11-07T06:30:00.000Z',
      ]);
    });

    it('finds none for a time the spring-forward change skips', () => {
      expect(instantsAtLocalTime({ year: 2027, month: 3, day: 28, hour: 2, minute: 30 }, 'Europe/Paris')).to.deep.equal([]);
    });
  });

  describe('firstInstantAtOrAfter', () => {
    const at = (local: { year: number; month: number; day: number; hour: number; minute: number }, zone: string) =>
      firstInstantAtOrAfter(local, zone).toISOString();

    it('is the instant itself for an ordinary time, and the first of a repeated one', () => {
      expect(at({ year: 2027, month: 1, day: 12, hour: 9, minute: 0 }, 'Europe/Paris')).to.equal('2027-01-12T08:00:00.000Z');
      expect(at({ year: 2027, month: 11, day: 7, hour: 1, minute: 30 }, 'America/New_York')).to.equal('2027-11-07T05:30:00.000Z');
    });

    it('is the end of the gap for a time the spring-forward change skips', () => {
      // Paris, 2027-03-28: 02:00 CET (01:00Z) jumps to 03:00 CEST.
      expect(at({ year: 2027, month: 3, day: 28, hour: 2, minute: 30 }, 'Europe/Paris')).to.equal('2027-03-28T01:00:00.000Z');
      // Santiago springs forward at midnight, 2027-09-05 00:00 (-04, 04:00Z) to 01:00 (-03).
      expect(at({ year: 2027, month: 9, day: 5, hour: 0, minute: 30 }, 'America/Santiago')).to.equal('2027-09-05T04:00:00.000Z');
      // Lord Howe moves by half an hour: 02:00 (+10:30, 2027-10-02T15:30Z) jumps to 02:30 (+11).
      expect(at({ year: 2027, month: 10, day: 3, hour: 2, minute: 15 }, 'Australia/Lord_Howe')).to.equal('2027-10-02T15:30:00.000Z');
    });
  });
});
