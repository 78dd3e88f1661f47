import { expect } from 'chai';
import { addDuration, checkDuration, MAX_WAIT_MS, MIN_WAIT_MS } from '../../../../src/services/runs/schedule/durations';

function add(from: string, text: string, zone: string): string {
  return addDuration(new Date(from), text, zone).toISOString();
}

const HOUR_MS = 3_600_000;

describe('engine schedule: wait durations', () => {
  describe('checkDuration', () => {
    it('accepts ISO 8601 durations from 1 second to 366 days', () => {
      for (const text of ['PT2H', 'P3D', 'P1W', 'PT1S', 'PT90M', 'P1M', 'PT1.5H', 'P1DT12H', 'P366D', 'P12M', 'P1Y']) {
        expect(checkDuration(text), text).to.deep.equal({ ok: true });
      }
      expect(MIN_WAIT_MS).to.equal(1_000);
      expect(MAX_WAIT_MS).to.equal(366 * 86_400_000);
    });

    it('refuses text that is not an ISO 8601 duration, naming it', () => {
      expect(checkDuration('2 hours')).to.deep.equal({ ok: false, message: '"2 hours" is not an ISO 8601 duration (e.g. PT2H, P3D)' });
      for (const text of ['', 'P', 'PT', 'P1DT', '2h', 'pt2h', ' PT2H', 'P1,5D', '2-hours']) {
        const result = checkDuration(text);
        expect(result.ok, text).to.equal(false);
        if (!result.ok) expect(result.message).to.equal(`${JSON.stringify(text)} is not an ISO 8601 duration (e.g. PT2H, P3D)`);
      }
    });

    it('refuses waits shorter than 1 second', () => {
      expect(checkDuration('PT0S')).to.deep.equal({ ok: false, message: 'PT0S is not a duration of at least 1 second' });
      expect(checkDuration('PT0.5S')).to.deep.equal({ ok: false, message: 'PT0.5S is not a duration of at least 1 second' });
      expect(checkDuration('P0D')).to.deep.equal({ ok: false, message: 'P0D is not a duration of at least 1 second' });
    });

    it('refuses negative parts, which luxon would read as going back in time', () => {
      for (const text of ['PT-1H', '-P1D', 'PT1H-30M', '-P-1D']) {
        const result = checkDuration(text);
        expect(result.ok, text).to.equal(false);
        if (!result.ok) expect(result.message).to.equal(`${text} has a negative part: a wait can only go forward (e.g. PT2H, P3D)`);
      }
    });

    it('refuses waits longer than 366 days, counting a year as 365 days and a month as 30', () => {
      expect(checkDuration('P2Y')).to.deep.equal({ ok: false, message: 'P2Y is more than 366 days' });
      expect(checkDuration('P367D').ok).to.equal(false);
      expect(checkDuration('P1Y2D').ok).to.equal(false);
      expect(checkDuration('P13M').ok).to.equal(false);
    });

    it('refuses a value that is not a string', () => {
      expect(checkDuration(7200 as unknown as string)).to.deep.equal({
        ok: false,
        message: '"7200" is not an ISO 8601 duration (e.g. PT2H, P3D)',
      });
    });
  });

  describe('addDuration', () => {
    it('keeps the local time for P1D across the spring-forward change (23 real hours)', () => {
      // 09:00 in Paris on Saturday 2027-03-27 (UTC+1), then 09:00 on Sunday (UTC+2).
      const end = add('2027-03-27T08:00:00.000Z', 'P1D', 'Europe/Paris');
      expect(end).to.equal('2027-03-28T07:00:00.000Z');
      expect(Date.parse(end) - Date.parse('2027-03-27T08:00:00.000Z')).to.equal(23 * HOUR_MS);
    });

    it('counts PT24H as exactly 24 real hours across the same change (10:00 local)', () => {
      expect(add('2027-03-27T08:00:00.000Z', 'PT24H', 'Europe/Paris')).to.equal('2027-03-28T08:00:00.000Z');
    });

    it('keeps the local time for P1D across the fall-back change (25 real hours)', () => {
      expect(add('2027-10-30T07:00:00.000Z', 'P1D', 'Europe/Paris')).to.equal('2027-10-31T08:00:00.000Z');
    });

    it('keeps the local time for P1W across a change', () => {
      expect(add('2027-03-22T08:00:00.000Z', 'P1W', 'Europe/Paris')).to.equal('2027-03-29T07:00:00.000Z');
    });

    it('moves a local time the change skips forward by the gap (02:30 + P1D -> 03:30 local)', () => {
      expect(add('2027-03-27T01:30:00.000Z', 'P1D', 'Europe/Paris')).to.equal('2027-03-28T01:30:00.000Z');
    });

    it('clamps P1M from 31 January to the last day of February', () => {
      expect(add('2027-01-31T08:00:00.000Z', 'P1M', 'Europe/Paris')).to.equal('2027-02-28T08:00:00.000Z');
      expect(add('2028-01-31T08:00:00.000Z', 'P1M', 'Europe/Paris')).to.equal('2028-02-29T08:00:00.000Z');
    });

    it('reads calendar dates in the given zone', () => {
      // 23:30Z on 30 January is already 31 January in Paris, so a month later is 28 February there.
      expect(add('2027-01-30T23:30:00.000Z', 'P1M', 'UTC')).to.equal('2027-02-28T23:30:00.000Z');
      expect(add('2027-01-30T23:30:00.000Z', 'P1M', 'Europe/Paris')).to.equal('2027-02-27T23:30:00.000Z');
    });

    it('adds exact time for hours, minutes, seconds and their fractions', () => {
      expect(add('2027-01-12T08:00:00.000Z', 'PT90M', 'Europe/Paris')).to.equal('2027-01-12T09:30:00.000Z');
      expect(add('2027-01-12T08:00:00.000Z', 'PT1.5H', 'Europe/Paris')).to.equal('2027-01-12T09:30:00.000Z');
      expect(add('2027-01-12T08:00:00.000Z', 'PT1S', 'Europe/Paris')).to.equal('2027-01-12T08:00:01.000Z');
    });
  });
});
