import { expect } from 'chai';
import { ValidationError } from '../../../src/errors/app-errors';
import {
  applyUpsert,
  assertWithinLimits,
  deepMerge,
  mergeUpsert,
  newContactState,
  uniqueTags,
  type ContactState,
} from '../../../src/services/contacts/contact-state';

// The pure rules behind upsert (the upsert merge rules of docs/api.md, docs/decisions.md "Contacts").

function existing(overrides: Partial<ContactState> = {}): ContactState {
  return {
    email: 'Ada@Example.com',
    emailNormalized: 'ada@example.com',
    phone: '+441111',
    firstName: 'Ada',
    lastName: 'Lovelace',
    tags: ['vip', 'newsletter'],
    customFields: { plan: 'pro', address: { city: 'Leeds', zip: 'LS1' } },
    emailSubscriptionStatus: 'subscribed',
    whatsappSubscriptionStatus: 'unsubscribed',
    ...overrides,
  };
}

function keysObject(count: number, prefix = 'k'): Record<string, number> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, i]));
}

describe('contact state rules', () => {
  describe('deepMerge', () => {
    it('merges nested plain objects recursively and keeps keys the patch does not name', () => {
      const base = { plan: 'pro', address: { city: 'Leeds', geo: { lat: 1, lng: 2 } } };
      const patch = { address: { geo: { lat: 9 }, street: 'Main St' } };
      expect(deepMerge(base, patch)).to.deep.equal({
        plan: 'pro',
        address: { city: 'Leeds', street: 'Main St', geo: { lat: 9, lng: 2 } },
      });
    });

    it('replaces arrays instead of concatenating or merging them', () => {
      expect(deepMerge({ list: [1, 2, 3], nested: { list: ['a'] } }, { list: [4], nested: { list: [] } })).to.deep.equal({
        list: [4],
        nested: { list: [] },
      });
    });

    it('replaces an object with a scalar and a scalar with an object', () => {
      expect(deepMerge({ a: { x: 1 }, b: 'text' }, { a: 'flat', b: { y: 2 } })).to.deep.equal({ a: 'flat', b: { y: 2 } });
    });

    it('replaces an object with an array rather than merging them', () => {
      expect(deepMerge({ a: { x: 1 } }, { a: [1] })).to.deep.equal({ a: [1] });
      expect(deepMerge({ a: [1] }, { a: { x: 1 } })).to.deep.equal({ a: { x: 1 } });
    });

    it('replaces with null instead of deleting or merging', () => {
      const merged = deepMerge({ a: { x: 1 }, b: 2 }, { a: null, b: null });
      expect(merged).to.deep.equal({ a: null, b: null });
      expect(merged).to.have.all.keys('a', 'b');
    });

    it('leaves both inputs untouched', () => {
      const base = { a: { x: 1 }, list: [1] };
      const patch = { a: { y: 2 }, list: [2] };
      deepMerge(base, patch);
      expect(base).to.deep.equal({ a: { x: 1 }, list: [1] });
      expect(patch).to.deep.equal({ a: { y: 2 }, list: [2] });
    });

    it('keeps a "__proto__" key as an ordinary key without touching any prototype', () => {
      const patch = JSON.parse('{"__proto__": {"polluted": true}, "plain": 1}') as Record<string, unknown>;
      const merged = deepMerge({ keep: 'me' }, patch);

      expect(Object.keys(merged)).to.have.members(['keep', '__proto__', 'plain']);
      expect(Object.getPrototypeOf(merged)).to.equal(Object.prototype);
      expect((merged as { polluted?: unknown }).polluted).to.equal(undefined);
      expect(({} as { polluted?: unknown }).polluted).to.equal(undefined);
      expect(JSON.parse(JSON.stringify(merged))).to.deep.equal(
        JSON.parse('{"keep": "me", "__proto__": {"polluted": true}, "plain": 1}'),
      );
      expect(JSON.stringify(merged)).to.include('"__proto__":{"polluted":true}');
    });

    it('merges into an existing "__proto__" key like any other nested object', () => {
      const base = JSON.parse('{"__proto__": {"a": 1}}') as Record<string, unknown>;
      const patch = JSON.parse('{"__proto__": {"b": 2}}') as Record<string, unknown>;
      const merged = deepMerge(base, patch);
      expect(JSON.stringify(merged)).to.equal('{"__proto__":{"a":1,"b":2}}');
      expect(Object.getPrototypeOf(merged)).to.equal(Object.prototype);
    });
  });

  describe('uniqueTags', () => {
    it('collapses duplicates keeping the position of the first occurrence', () => {
      expect(uniqueTags(['b', 'a', 'b', 'c', 'a'])).to.deep.equal(['b', 'a', 'c']);
    });

    it('keeps tags that differ only in case apart', () => {
      expect(uniqueTags(['VIP', 'vip'])).to.deep.equal(['VIP', 'vip']);
    });

    it('returns an empty list for no tags', () => {
      expect(uniqueTags([])).to.deep.equal([]);
    });
  });

  describe('newContactState', () => {
    it('fills defaults for everything not given', () => {
      expect(newContactState({ email: 'New@Example.com' })).to.deep.equal({
        email: 'New@Example.com',
        emailNormalized: 'new@example.com',
        phone: null,
        firstName: null,
        lastName: null,
        tags: [],
        customFields: {},
        emailSubscriptionStatus: 'subscribed',
        whatsappSubscriptionStatus: 'subscribed',
      });
    });

    it('treats null names and phone as null on a new contact', () => {
      const state = newContactState({ email: 'a@x.io', phone: null, firstName: null, lastName: null });
      expect([state.phone, state.firstName, state.lastName]).to.deep.equal([null, null, null]);
    });

    it('dedupes the given tags', () => {
      expect(newContactState({ email: 'a@x.io', tags: ['x', 'y', 'x'] }).tags).to.deep.equal(['x', 'y']);
    });
  });

  describe('mergeUpsert', () => {
    it('changes phone and names when they are given (rule 1)', () => {
      const merged = mergeUpsert(existing(), { email: 'ada@example.com', phone: '+449999', firstName: 'Augusta', lastName: 'King' });
      expect([merged.phone, merged.firstName, merged.lastName]).to.deep.equal(['+449999', 'Augusta', 'King']);
    });

    it('keeps phone and names when they are omitted (rule 1)', () => {
      const merged = mergeUpsert(existing(), { email: 'ada@example.com' });
      expect([merged.phone, merged.firstName, merged.lastName]).to.deep.equal(['+441111', 'Ada', 'Lovelace']);
    });

    it('treats null phone and names as not provided (rule 1)', () => {
      const merged = mergeUpsert(existing(), { email: 'ada@example.com', phone: null, firstName: null, lastName: null });
      expect([merged.phone, merged.firstName, merged.lastName]).to.deep.equal(['+441111', 'Ada', 'Lovelace']);
    });

    it('deep-merges customFields into the existing ones (rule 2)', () => {
      const merged = mergeUpsert(existing(), {
        email: 'ada@example.com',
        customFields: { address: { city: 'York' }, score: 5 },
      });
      expect(merged.customFields).to.deep.equal({ plan: 'pro', address: { city: 'York', zip: 'LS1' }, score: 5 });
    });

    it('keeps customFields when none are given (rule 2)', () => {
      expect(mergeUpsert(existing(), { email: 'ada@example.com' }).customFields).to.deep.equal({
        plan: 'pro',
        address: { city: 'Leeds', zip: 'LS1' },
      });
    });

    it('replaces tags when a non-empty list is given, deduped (rule 3)', () => {
      const merged = mergeUpsert(existing(), { email: 'ada@example.com', tags: ['b2b', 'vip', 'b2b'] });
      expect(merged.tags).to.deep.equal(['b2b', 'vip']);
    });

    it('keeps existing tags when upsert sends an empty list (rule 3)', () => {
      expect(mergeUpsert(existing(), { email: 'ada@example.com', tags: [] }).tags).to.deep.equal(['vip', 'newsletter']);
    });

    it('keeps existing tags when upsert sends no tags (rule 3)', () => {
      expect(mergeUpsert(existing(), { email: 'ada@example.com' }).tags).to.deep.equal(['vip', 'newsletter']);
    });

    it('changes subscription statuses only when given (rule 4)', () => {
      const untouched = mergeUpsert(existing(), { email: 'ada@example.com' });
      expect([untouched.emailSubscriptionStatus, untouched.whatsappSubscriptionStatus]).to.deep.equal([
        'subscribed',
        'unsubscribed',
      ]);
      const changed = mergeUpsert(existing(), {
        email: 'ada@example.com',
        emailSubscriptionStatus: 'unsubscribed',
        whatsappSubscriptionStatus: 'subscribed',
      });
      expect([changed.emailSubscriptionStatus, changed.whatsappSubscriptionStatus]).to.deep.equal([
        'unsubscribed',
        'subscribed',
      ]);
    });

    it('keeps the email as first given when the upsert spells it differently', () => {
      const merged = mergeUpsert(existing(), { email: 'ADA@EXAMPLE.COM', firstName: 'A' });
      expect(merged.email).to.equal('Ada@Example.com');
      expect(merged.emailNormalized).to.equal('ada@example.com');
    });

    it('does not modify the current state it merges onto', () => {
      const current = existing();
      mergeUpsert(current, { email: 'ada@example.com', tags: ['x'], customFields: { address: { city: 'York' } } });
      expect(current).to.deep.equal(existing());
    });
  });

  describe('applyUpsert', () => {
    it('creates a new state when there is no current contact', () => {
      expect(applyUpsert(null, { email: 'a@x.io', tags: [] })).to.deep.equal(newContactState({ email: 'a@x.io' }));
    });

    it('merges onto the current contact when there is one', () => {
      const applied = applyUpsert(existing(), { email: 'ada@example.com', tags: [] });
      expect(applied.tags).to.deep.equal(['vip', 'newsletter']);
      expect(applied.firstName).to.equal('Ada');
    });
  });

  describe('assertWithinLimits', () => {
    it('accepts exactly 100 custom fields and 100 tags', () => {
      const tags = Array.from({ length: 100 }, (_, i) => `t${i}`);
      expect(() => assertWithinLimits(existing({ customFields: keysObject(100), tags }))).not.to.throw();
    });

    it('rejects a state with 101 custom fields, naming the field under the given path', () => {
      let caught: unknown;
      try {
        assertWithinLimits(existing({ customFields: keysObject(101) }), 'contacts.4.');
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(ValidationError);
      const error = caught as ValidationError;
      expect(error.status).to.equal(400);
      expect(error.details).to.have.length(1);
      expect(error.details[0].path).to.equal('contacts.4.customFields');
      expect(error.message).to.match(/^contacts\.4\.customFields: /);
    });

    it('rejects a state with 101 tags', () => {
      const tags = Array.from({ length: 101 }, (_, i) => `t${i}`);
      expect(() => assertWithinLimits(existing({ tags }))).to.throw(ValidationError, /^tags: /);
    });

    it('rejects custom fields over 16 KiB as JSON', () => {
      expect(() => assertWithinLimits(existing({ customFields: { big: 'x'.repeat(16 * 1024) } }))).to.throw(
        ValidationError,
        /^customFields: .*16 KiB/,
      );
    });
  });
});
