import { expect } from 'chai';
import { DateTime } from 'luxon';
import { allowedWeekdayNumbers, isWeekday, WEEKDAYS, weekdayFromNumber, weekdayNumber } from '../../../../src/services/runs/schedule/weekdays';

describe('engine schedule: weekdays', () => {
  it('numbers weekdays as luxon does, Monday 1 to Sunday 7', () => {
    expect(WEEKDAYS.map(weekdayNumber)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    expect(weekdayNumber('mon')).to.equal(1);
    expect(weekdayNumber('sun')).to.equal(7);
  });

  it("agrees with luxon's weekday for a real date", () => {
    // 2027-03-28 is a Sunday; 2027-01-18 a Monday.
    expect(weekdayFromNumber(DateTime.fromISO('2027-03-28', { zone: 'Europe/Paris' }).weekday)).to.equal('sun');
    expect(weekdayFromNumber(DateTime.fromISO('2027-01-18', { zone: 'UTC' }).weekday)).to.equal('mon');
  });

  it('turns a number back into its weekday, and refuses numbers that are not one', () => {
    for (const day of WEEKDAYS) expect(weekdayFromNumber(weekdayNumber(day))).to.equal(day);
    expect(() => weekdayFromNumber(0)).to.throw(RangeError);
    expect(() => weekdayFromNumber(8)).to.throw(RangeError);
  });

  it('recognises only the short lowercase names', () => {
    expect(isWeekday('fri')).to.equal(true);
    for (const value of ['Fri', 'friday', '', 5, null, undefined]) expect(isWeekday(value)).to.equal(false);
  });

  it('allows every day when no weekday is named, and ignores repeats', () => {
    expect([...allowedWeekdayNumbers(undefined)].sort()).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    expect([...allowedWeekdayNumbers([])].sort()).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    expect([...allowedWeekdayNumbers(['sat', 'mon', 'sat'])].sort()).to.deep.equal([1, 6]);
  });
});
