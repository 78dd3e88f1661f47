import { expect } from 'chai';
import { select } from '../../../src/db/sql/statements';
import { withTransaction } from '../../../src/db/sql/transaction';
import { isOptOut, optOutKey, optOutKeys } from '../../../src/schemas/opt-out-keywords';
import { recordWhatsAppRecipientFailures, UNDELIVERABLE_IN_A_ROW } from '../../../src/services/messages/whatsapp-recipient-failures';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { allEvents } from '../events/support';

// The recipient-side handling the status webhook and the send path share
// (src/services/messages/whatsapp-recipient-failures.ts), against the database.

const record = (failures: Parameters<typeof recordWhatsAppRecipientFailures>[1]) =>
  withTransaction(testDb(), (transaction) => recordWhatsAppRecipientFailures(testDb(), failures, { now: new Date(), via: 'send' }, transaction));

async function suppressions(accountId: string) {
  return select<{ address: string; reason: string; source: string | null }>(testDb(), 'SELECT address, reason, source FROM suppressions WHERE account_id = ? ORDER BY address', [accountId]);
}

describe('WhatsApp recipient failures (131050, 131026)', () => {
  it('opts out on 131050 from a send: the number suppressed, every contact with it unsubscribed, with their events', async () => {
    const { accountId } = await buildTenant();
    const named = await buildContact(accountId, { phone: '+49 151 1234 5678' });
    const twin = await buildContact(accountId, { phone: '00491511234 5678' });
    const result = await record([{ accountId, to: '4915112345678', contactId: named.id, code: 131050, source: 'message:m-1' }]);
    expect(result).to.deep.equal({ optedOut: 1, invalid: 0 });
    expect(await suppressions(accountId)).to.deep.equal([{ address: '+4915112345678', reason: 'opt_out', source: 'message:m-1' }]);
    const [rows] = [await select<{ id: string; whatsapp_subscription_status: string }>(testDb(), 'SELECT id, whatsapp_subscription_status FROM contacts WHERE account_id = ? ORDER BY id', [accountId])];
    expect(rows.map((row) => row.whatsapp_subscription_status)).to.deep.equal(['unsubscribed', 'unsubscribed']);
    const changed = (await allEvents(accountId)).filter((e) => e.type === 'contact.subscription_changed');
    expect(changed.map((e) => (e.data as { contact: { id: string } }).contact.id).sort()).to.deep.equal([named.id, twin.id].sort());
    const suppressed = (await allEvents(accountId)).filter((e) => e.type === 'contact.suppressed');
    expect(suppressed.map((e) => (e.data as { contact: { id: string } }).contact.id)).to.deep.equal([named.id]);
  });

  it('counts 131026 per account and number, and suppresses as invalid at the limit, whatever the number of calls at once', async () => {
    const { accountId } = await buildTenant();
    const other = await buildTenant();
    const failure = (account: string, to: string, i: number) => ({ accountId: account, to, contactId: null, code: '131026', source: `message:m-${i}` });
    // The limit's failures at once, each in its own transaction: the database adds them up.
    const answers = await Promise.all(Array.from({ length: UNDELIVERABLE_IN_A_ROW }, (_, i) => record([failure(accountId, '+447700900123', i)])));
    expect(answers.reduce((sum, answer) => sum + answer.invalid, 0)).to.equal(1);
    expect((await suppressions(accountId)).map((s) => [s.address, s.reason])).to.deep.equal([['+447700900123', 'invalid']]);
    // Another account's count and another number's are their own; two in one call count two.
    await record([failure(other.accountId, '447700900123', 9), failure(accountId, '447700900999', 10), failure(accountId, '447700900999', 11)]);
    expect(await suppressions(other.accountId)).to.deep.equal([]);
    const counts = await select<{ account_id: string; address: string; consecutive: number }>(
      testDb(),
      'SELECT account_id, address, consecutive FROM whatsapp_recipient_failures ORDER BY account_id, address',
      [],
    );
    expect(counts.filter((row) => row.account_id === accountId).map((row) => [row.address, Number(row.consecutive)])).to.deep.equal([
      ['+447700900123', UNDELIVERABLE_IN_A_ROW],
      ['+447700900999', 2],
    ]);
  });

  it('passes over other codes', async () => {
    const { accountId } = await buildTenant();
    expect(await record([{ accountId, to: '4915112345678', contactId: null, code: 131000, source: null }])).to.deep.equal({ optedOut: 0, invalid: 0 });
    expect(await suppressions(accountId)).to.deep.equal([]);
  });
});

describe('opt-out keywords', () => {
  const cases: Array<[string, boolean]> = [
    ['STOP', true],
    [' stop ', true],
    ['Stop!', true],
    ['¡Baja!', true],
    ['Arrêt', true],
    ['ARRÊT.', true],
    ['stopp', true],
    ['Unsubscribe', true],
    ['S T O P', false],
    ['stop it', false],
    ['Stop promotions', false],
    ['please stop', false],
    ['', false],
  ];
  const defaults = optOutKeys(null);
  for (const [text, expected] of cases) {
    it(`${expected ? 'takes' : 'does not take'} ${JSON.stringify(text)} as an opt-out with the defaults`, () => {
      expect(isOptOut(defaults, [text])).to.equal(expected);
    });
  }
  it('compares an account\'s own keywords the same way, and a button by its payload or its text', () => {
    const keys = optOutKeys(['Stop promotions', 'OPT_OUT']);
    expect(isOptOut(keys, ['STOP  PROMOTIONS'])).to.equal(true);
    expect(isOptOut(keys, ['Not now', 'opt_out'])).to.equal(true);
    expect(isOptOut(keys, ['STOP'])).to.equal(false);
    expect(optOutKey('  Désabonner ! ')).to.equal('desabonner');
  });
});
