import { expect } from 'chai';
import { whereEmailsGo } from '../../src/startup/where-emails-go';

// The start's line on where email goes (src/startup/where-emails-go.ts): captured, or the
// relay SMTP_URL names, by host and port only.
describe('where emails go, as the start prints it', () => {
  const base = { smtpUrlCaptures: false, dataDir: 'data', engineRuns: true };

  it('says emails are captured without SMTP_URL', () => {
    expect(whereEmailsGo(base)).to.match(/^ {2}Emails are NOT sent \(no SMTP_URL\): each is written as an \.eml file to data.outbox/);
  });

  it('names a relay on this machine (Mailpit) by address, never its password', () => {
    const line = whereEmailsGo({ ...base, smtpUrl: 'smtp://user:secret@127.0.0.1:1025' })!;
    expect(line).to.equal('  Emails go to the SMTP server on this machine at smtp://127.0.0.1:1025 (SMTP_URL): what it does with them is its own (Mailpit keeps them, at its web page)');
    expect(line).to.not.include('secret');
  });

  it('says a catching relay keeps them and a real relay delivers them', () => {
    expect(whereEmailsGo({ ...base, smtpUrl: 'smtp://mailpit:1025', smtpUrlCaptures: true })).to.include('a catching relay (SMTP_URL_CAPTURES)');
    expect(whereEmailsGo({ ...base, smtpUrl: 'smtps://smtp.shop.example:465' })).to.include('sent through the relay at smtps://smtp.shop.example:465 (SMTP_URL): they reach their recipients');
  });
});
