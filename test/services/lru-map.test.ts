import { expect } from 'chai';
import { LruMap } from '../../src/services/lru-map';

describe('LruMap', () => {
  it('drops the entry used least recently when a new one does not fit, not everything', () => {
    const map = new LruMap<string, number>(3);
    map.set('a', 1).set('b', 2).set('c', 3);
    expect(map.get('a')).to.equal(1); // a is now the most recent; b the least
    map.set('d', 4);
    expect(map.size).to.equal(3);
    expect(map.get('b')).to.equal(undefined);
    expect([map.get('a'), map.get('c'), map.get('d')]).to.deep.equal([1, 3, 4]);
  });

  it('counts setting a key again as a use, and does not grow for it', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('a', 10).set('c', 3);
    expect(map.size).to.equal(2);
    expect(map.get('b')).to.equal(undefined);
    expect(map.get('a')).to.equal(10);
  });

  it('keeps a stored undefined apart from a missing key', () => {
    const map = new LruMap<string, number | undefined>(1);
    map.set('a', undefined);
    expect(map.size).to.equal(1);
    map.set('b', 2);
    expect(map.size).to.equal(1);
    expect(map.get('b')).to.equal(2);
  });

  it('refuses a capacity that could hold nothing', () => {
    expect(() => new LruMap(0)).to.throw(RangeError, 'capacity must be a positive integer, got 0');
    expect(() => new LruMap(1.5)).to.throw(RangeError);
  });
});
