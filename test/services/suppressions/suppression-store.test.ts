import { expect } from 'chai';
import { withTransaction } from '../../../src/db/sql/transaction';
import {
  addSuppressions,
  normalizeSuppressionAddress,
  removeSuppression,
  suppressedAddresses,
  suppressedKey,
} from '../../../src/services/suppressions/suppression-store';
import { testDb } from '../../support/db';
import { buildAccount, buildContact } from '../../support/factories';
import { allEvents } from '../events/support';

const db = () => testDb();

describe('the suppression list (src/services/suppressions/suppression-store.ts)', () => {
  it('normalizes an email as contacts are keyed, and a phone to E.164 with its +', () => {
    expect(normalizeSuppressionAddress('email', '  Ada@Example.COM ')).to.equal('ada@example.com');
    expect(normalizeSuppressionAddress('whatsapp', '+49 151 1285 5001')).to.equal('+4915112855001');
    expect(normalizeSuppressionAddress('whatsapp', '004915112855001')).to.equal('+4915112855001');
    expect(normalizeSuppressionAddress('whatsapp', '015112855001')).to.equal(null);
    expect(normalizeSuppressionAddress('email', 'not-an-address')).to.equal(null);
  });

  it('adds an address once, keeps the first reason, and records contact.suppressed for the contact that has it', async () => {
    const account = await buildAccount();
    const contact = await buildContact(account.id, { email: 'Ada@Example.com' });
    const now = new Date('2026-12-01T10:00:00.000Z');
    const first = await withTransaction(db(), (t) =>
      addSuppressions(db(), account.id, [{ channel: 'email', address: 'ada@example.com', reason: 'hard_bounce', source: 'message:m1' }], { now }, t),
    );
    expect(first.added).to.have.length(1);
    const again = await withTransaction(db(), (t) =>
      addSuppressions(
        db(),
        account.id,
        [
          { channel: 'email', address: 'ada@example.com', reason: 'manual', source: null },
          { channel: 'whatsapp', address: '+4915112855001', reason: 'opt_out', source: null, contactId: contact.id },
        ],
        { now },
        t,
      ),
    );
    expect(again.added.map((row) => row.channel)).to.deep.equal(['whatsapp']);
    expect(again.existing).to.equal(1);
    const found = await suppressedAddresses(db(), 'email', [
      { accountId: account.id, address: 'ada@example.com' },
      { accountId: account.id, address: 'bob@example.com' },
    ]);
    expect([...found]).to.deep.equal([suppressedKey(account.id, 'ada@example.com')]);
    const events = (await allEvents(account.id)).filter((event) => event.type === 'contact.suppressed');
    expect(events.map((event) => (event.data as { suppression: { reason: string } }).suppression.reason)).to.deep.equal(['hard_bounce', 'opt_out']);
    expect((events[0]!.data as { contact: { id: string } }).contact.id).to.equal(contact.id);
  });

  it('removes a suppression and records contact.unsuppressed; removing none answers null', async () => {
    const account = await buildAccount();
    await buildContact(account.id, { email: 'ada@example.com' });
    const now = new Date();
    await withTransaction(db(), (t) => addSuppressions(db(), account.id, [{ channel: 'email', address: 'ada@example.com', reason: 'manual', source: null }], { now }, t));
    const removed = await withTransaction(db(), (t) => removeSuppression(db(), account.id, { channel: 'email', address: 'ada@example.com' }, t));
    expect(removed?.reason).to.equal('manual');
    expect(await withTransaction(db(), (t) => removeSuppression(db(), account.id, { channel: 'email', address: 'ada@example.com' }, t))).to.equal(null);
    expect((await allEvents(account.id)).map((event) => event.type).filter((type) => type.includes('suppressed'))).to.deep.equal(['contact.suppressed', 'contact.unsuppressed']);
  });
});
