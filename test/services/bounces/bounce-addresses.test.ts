import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { select } from '../../../src/db/sql/statements';
import { messageAddresses, readRecipient } from '../../../src/services/bounces/bounce-addresses';
import { signMessageToken, verifyMessageToken } from '../../../src/services/bounces/message-token';
import { newRowId } from '../../../src/services/ids';
import { channelSettings } from '../../support/channels';
import { testDb } from '../../support/db';
import { startSmtpServer } from '../../support/smtp-server';
import { engineAt, enrolledRun } from '../engine/support';

// The envelope sender (VERP) and the other addresses an email carries for what comes back.

const unfolded = (raw: string) => raw.replace(/\r?\n[ \t]+/g, ' ');
const header = (raw: string, name: string) => new RegExp(`^${name}: (.*)$`, 'mi').exec(unfolded(raw))?.[1]?.trim();

describe('bounce addresses', () => {
  const key = randomBytes(32);

  it('signs a message id into 44 lower-case characters that read back, whatever the case a relay gives them', () => {
    const id = newRowId();
    const token = signMessageToken(key, 'bounce', id);
    expect(token).to.match(/^[a-z2-7]{44}$/);
    expect(`bounce+${token}`.length).to.be.at.most(64);
    expect(verifyMessageToken(key, 'bounce', token)).to.equal(id);
    expect(verifyMessageToken(key, 'bounce', token.toUpperCase())).to.equal(id);
  });

  it("takes a signed bounce address at an account's own bounce domain, and refuses a forged one there as any other domain's", () => {
    const id = newRowId();
    const token = signMessageToken(key, 'bounce', id);
    const settings = { key, bounceDomain: 'bounces.svc.example' };
    expect(readRecipient(settings, `bounce+${token}@bounces.shop.example`)).to.deep.equal({ kind: 'bounce', messageId: id });
    expect(readRecipient(settings, `bounce+${token.slice(1)}a@bounces.shop.example`)).to.deep.equal({ kind: 'foreign' });
    expect(readRecipient(settings, 'postmaster@bounces.shop.example')).to.deep.equal({ kind: 'foreign' });
  });

  it('refuses a token of another key, another purpose, or altered by one character', () => {
    const id = newRowId();
    const token = signMessageToken(key, 'bounce', id);
    expect(verifyMessageToken(randomBytes(32), 'bounce', token)).to.equal(null);
    expect(verifyMessageToken(key, 'unsubscribe', token)).to.equal(null);
    const altered = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
    expect(verifyMessageToken(key, 'bounce', altered)).to.equal(null);
    expect(verifyMessageToken(key, 'bounce', token.slice(1))).to.equal(null);
    expect(verifyMessageToken(key, 'bounce', `${token.slice(0, 43)}!`)).to.equal(null);
  });

  it('reads what a recipient address names: a bounce, an unsubscribe, a report address, a forgery, another domain', () => {
    const id = newRowId();
    const settings = { key, bounceDomain: 'bounces.shop.example', unsubscribeMailbox: 'unsub@list.shop.example' };
    expect(readRecipient(settings, `bounce+${signMessageToken(key, 'bounce', id)}@Bounces.Shop.Example`)).to.deep.equal({ kind: 'bounce', messageId: id });
    expect(readRecipient(settings, `unsub+${signMessageToken(key, 'unsubscribe', id)}@list.shop.example`)).to.deep.equal({ kind: 'unsubscribe', messageId: id });
    expect(readRecipient(settings, 'fbl@bounces.shop.example')).to.deep.equal({ kind: 'report' });
    expect(readRecipient(settings, `bounce+${signMessageToken(randomBytes(32), 'bounce', id)}@bounces.shop.example`)).to.deep.equal({ kind: 'forged' });
    expect(readRecipient(settings, `unsub+${signMessageToken(key, 'bounce', id)}@list.shop.example`)).to.deep.equal({ kind: 'forged' });
    expect(readRecipient(settings, 'someone@elsewhere.example')).to.deep.equal({ kind: 'foreign' });
    expect(readRecipient(settings, 'someone@shop.example')).to.deep.equal({ kind: 'foreign' });
  });

  it('has no envelope sender nor mailto without a bounce domain and mailbox, and a Feedback-ID either way', () => {
    const settings = channelSettings();
    const addresses = messageAddresses(settings, { bounceDomain: null }, { id: newRowId(), accountId: 'acc', sequenceId: 'seq', stepId: 'mail', from: 'Shop <news@shop.example>' });
    expect(addresses).to.deep.equal({ returnPath: null, unsubscribeMailto: null, feedbackId: 'seq:mail:acc:shop.example' });
  });
});

describe('sequence engine: the envelope sender and Feedback-ID of an email step', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('sends with MAIL FROM bounce+<token>@BOUNCE_DOMAIN naming the message, the From unchanged, a Feedback-ID and a mailto', async () => {
    const server = await startSmtpServer();
    const settings = channelSettings({ emailFrom: 'Shop <shop@example.com>', smtpUrl: server.url, bounceDomain: 'bounces.example.net', unsubscribeMailbox: 'unsubscribe@bounces.example.net' });
    const { engine, advance } = engineAt(Date.now() + 1, { messages: { settings, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-outbox-')) } });
    cleanups.push(() => server.close(), () => engine.stop(50));
    const run = await enrolledRun([{ id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi</p>' }]);
    advance(1_000);
    await engine.runUntilIdle();
    expect(server.received).to.have.length(1);
    const [mail] = server.received;
    const [message] = await select<{ id: string; content: string }>(testDb(), 'SELECT id, content FROM messages WHERE run_id = ?', [run.runId]);
    const envelopeFrom = mail!.envelope.from;
    expect(envelopeFrom).to.match(/^bounce\+[a-z2-7]{44}@bounces\.example\.net$/);
    expect(verifyMessageToken(settings.secrets!.bounce, 'bounce', envelopeFrom.slice('bounce+'.length, envelopeFrom.indexOf('@')))).to.equal(message!.id);
    expect(mail!.envelope.to).to.deep.equal([run.contact.email]);
    expect(mail!.parsed.from?.value[0]?.address).to.equal('shop@example.com');
    expect(header(mail!.raw, 'Feedback-ID')).to.equal(`${run.sequence.id}:mail:${run.accountId}:example.com`);
    const unsubscribe = header(mail!.raw, 'List-Unsubscribe')!;
    const mailto = /<mailto:unsubscribe\+([a-z2-7]{44})@bounces\.example\.net\?subject=unsubscribe>/.exec(unsubscribe);
    expect(unsubscribe).to.match(/^<https:\/\/svc\.example\.com\/u\/[A-Za-z0-9_-]+>, <mailto:/);
    expect(verifyMessageToken(settings.secrets!.bounce, 'unsubscribe', mailto![1]!)).to.equal(message!.id);
    expect(JSON.parse(message!.content)).to.include({ returnPath: envelopeFrom });
  });
});
