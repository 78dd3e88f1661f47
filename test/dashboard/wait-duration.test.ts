import { expect } from 'chai';
import { amountOf, isoOf } from '../../web/src/pages/sequences/builder/wait-duration';

// The builder's wait length: a whole number and a unit in the form, ISO 8601 in the API.

describe('the builder\'s wait durations (number and unit <-> ISO 8601)', () => {
  it('shows a stored duration in the largest unit that divides it exactly', () => {
    expect(amountOf('P1DT2H')).to.deep.equal({ amount: 26, unit: 'hours' });
    expect(amountOf('PT2H')).to.deep.equal({ amount: 2, unit: 'hours' });
    expect(amountOf('PT120M')).to.deep.equal({ amount: 2, unit: 'hours' });
    expect(amountOf('P14D')).to.deep.equal({ amount: 2, unit: 'weeks' });
    expect(amountOf('P1W')).to.deep.equal({ amount: 1, unit: 'weeks' });
    expect(amountOf('PT90M')).to.deep.equal({ amount: 90, unit: 'minutes' });
    expect(amountOf('PT60S')).to.deep.equal({ amount: 1, unit: 'minutes' });
  });

  it('says nothing for what no unit says exactly, or what is not a duration', () => {
    for (const iso of ['PT90S', 'P1M', 'P1Y', 'PT1.5H', 'P', 'PT', 'P1DT', 'PT0S', '', undefined, 'two days']) expect(amountOf(iso), String(iso)).to.equal(null);
  });

  it('writes the ISO 8601 the API stores', () => {
    expect(isoOf({ amount: 30, unit: 'minutes' })).to.equal('PT30M');
    expect(isoOf({ amount: 26, unit: 'hours' })).to.equal('PT26H');
    expect(isoOf({ amount: 3, unit: 'days' })).to.equal('P3D');
    expect(isoOf({ amount: 2, unit: 'weeks' })).to.equal('P2W');
  });
});
