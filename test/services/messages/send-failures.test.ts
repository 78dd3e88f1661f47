import { expect } from 'chai';
import { classifySmtpFailure, classifyWhatsAppFailure, smtpFailureOf } from '../../../src/services/messages/send-failures';

// The classification of failed sends (docs/channels.md "Bounces, classified"), one row per case:
// the error as nodemailer makes it (its command, response and code), and what it comes to.

const smtp = (command: string, response: string | null, code = 'EENVELOPE', originalCode?: string) =>
  Object.assign(new Error('failed'), {
    code,
    command,
    ...(originalCode && { originalCode }),
    ...(response !== null && { response, responseCode: Number(/^\d+/.exec(response)?.[0]) }),
  });

describe('send failures: who caused them', () => {
  const cases: Array<[string, Error, { kind: string; code: string; reason: string; scope?: string; senderWhenExhausted?: boolean }]> = [
    ['RCPT 550 5.1.1', smtp('RCPT TO', '550 5.1.1 <a@b.example>: Recipient address rejected: User unknown'), { kind: 'hard_bounce', code: 'hard_bounce', reason: 'bounced: 550 5.1.1 no such mailbox' }],
    ['RCPT 550 5.1.10 (Microsoft)', smtp('RCPT TO', '550 5.1.10 RESOLVER.ADR.RecipientNotFound'), { kind: 'hard_bounce', code: 'hard_bounce', reason: 'bounced: 550 5.1.10 the address was refused' }],
    ['RCPT 550 5.2.1 disabled', smtp('RCPT TO', '550 5.2.1 The email account that you tried to reach is disabled'), { kind: 'hard_bounce', code: 'hard_bounce', reason: 'bounced: 550 5.2.1 the mailbox is disabled' }],
    ['RCPT 553 5.5.4 bad syntax', smtp('RCPT TO', '553 5.5.4 <x>: Recipient address rejected'), { kind: 'hard_bounce', code: 'hard_bounce', reason: 'bounced: 553 5.5.4 the address was refused' }],
    ['RCPT 550 with no enhanced code', smtp('RCPT TO', '550 No such user here'), { kind: 'hard_bounce', code: 'hard_bounce', reason: 'bounced: 550 the address was refused' }],
    ['DATA 550 5.1.1 after the final dot', smtp('DATA', '550 5.1.1 user unknown', 'EMESSAGE'), { kind: 'hard_bounce', code: 'hard_bounce', reason: 'bounced: 550 5.1.1 no such mailbox' }],
    ['RCPT 550 5.7.1 policy', smtp('RCPT TO', '550 5.7.1 Relaying denied'), { kind: 'rejected', code: 'rejected', reason: "rejected: 550 5.7.1 refused by the receiver's policy" }],
    ['DATA 554 5.7.1 spam', smtp('DATA', '554 5.7.1 Message rejected as spam', 'EMESSAGE'), { kind: 'rejected', code: 'rejected', reason: "rejected: 554 5.7.1 refused by the receiver's policy" }],
    ['DATA 552 5.3.4 too big', smtp('DATA', '552 5.3.4 Message size exceeds fixed limit', 'EMESSAGE'), { kind: 'rejected', code: 'rejected', reason: 'rejected: 552 5.3.4 the receiving server refused the message' }],
    ['DATA 554 with no enhanced code', smtp('DATA', '554 Transaction failed', 'EMESSAGE'), { kind: 'rejected', code: 'rejected', reason: 'rejected: 554 the receiving server refused the message' }],
    ['RCPT 452 4.2.2 mailbox full', smtp('RCPT TO', '452 4.2.2 Mailbox full'), { kind: 'soft', code: 'soft_bounce', reason: 'deferred: 452 4.2.2 the receiving server asked us to try again later' }],
    ['DATA 451 4.7.1 greylisted', smtp('DATA', '451 4.7.1 Greylisted, try again', 'EMESSAGE'), { kind: 'soft', code: 'soft_bounce', reason: 'deferred: 451 4.7.1 the receiving server asked us to try again later' }],
    ['AUTH 535 5.7.8', smtp('AUTH PLAIN', '535 5.7.8 Error: authentication failed: secret banner', 'EAUTH'), { kind: 'sender', code: 'smtp_auth_failed', reason: 'smtp auth failed (535 5.7.8)', scope: 'channel' }],
    ['AUTH 530 5.7.0', smtp('AUTH LOGIN', '530 5.7.0 Authentication required', 'EAUTH'), { kind: 'sender', code: 'smtp_auth_failed', reason: 'smtp auth failed (530 5.7.0)', scope: 'channel' }],
    ['AUTH 534 5.7.9', smtp('AUTH PLAIN', '534 5.7.9 Application-specific password required', 'EAUTH'), { kind: 'sender', code: 'smtp_auth_failed', reason: 'smtp auth failed (534 5.7.9)', scope: 'channel' }],
    ['AUTH with no answer code (missing credentials)', smtp('API', null, 'EAUTH'), { kind: 'sender', code: 'smtp_auth_failed', reason: 'smtp auth failed (EAUTH)', scope: 'channel' }],
    ['AUTH 454 4.7.0 (temporary)', smtp('AUTH PLAIN', '454 4.7.0 Temporary authentication failure', 'EAUTH'), { kind: 'soft', code: 'smtp_auth_deferred', reason: 'smtp auth deferred (454 4.7.0)' }],
    ['MAIL FROM 550 5.7.1 refused', smtp('MAIL FROM', '550 5.7.1 Sender address rejected: not owned by user'), { kind: 'sender', code: 'smtp_sender_refused', reason: 'smtp sender refused (550 5.7.1)', scope: 'channel' }],
    ['MAIL FROM 451 (temporary)', smtp('MAIL FROM', '451 4.3.0 Try later'), { kind: 'soft', code: 'smtp_sender_deferred', reason: 'smtp sender deferred (451 4.3.0)' }],
    ['STARTTLS refused', smtp('STARTTLS', '454 4.7.0 TLS not available', 'ETLS'), { kind: 'sender', code: 'smtp_tls_failed', reason: 'smtp tls failed (454 4.7.0)', scope: 'channel' }],
    ['TLS handshake failed', smtp('CONN', null, 'ETLS'), { kind: 'sender', code: 'smtp_tls_failed', reason: 'smtp tls failed (ETLS)', scope: 'channel' }],
    ['connection refused', smtp('CONN', null, 'ESOCKET', 'ECONNREFUSED'), { kind: 'soft', code: 'smtp_unreachable', reason: 'connection refused (ECONNREFUSED)', senderWhenExhausted: true }],
    ['host not found', smtp('CONN', null, 'EDNS', 'ENOTFOUND'), { kind: 'soft', code: 'smtp_unreachable', reason: 'host not found (ENOTFOUND)', senderWhenExhausted: true }],
    ['connection timed out', smtp('CONN', null, 'ETIMEDOUT'), { kind: 'soft', code: 'smtp_unreachable', reason: 'connection timed out (ETIMEDOUT)', senderWhenExhausted: true }],
    ['not an SMTP server (a banner)', smtp('CONN', '-ERR unknown command "EHLO" from redis', 'EPROTOCOL'), { kind: 'soft', code: 'smtp_unreachable', reason: 'the server did not answer as an SMTP server (EPROTOCOL)', senderWhenExhausted: true }],
    ['greeting 421', smtp('CONN', '421 4.3.2 Service shutting down', 'ECONNECTION'), { kind: 'soft', code: 'smtp_deferred', reason: 'the relay deferred the session (421 4.3.2)', senderWhenExhausted: true }],
    ['greeting 554 no service', smtp('CONN', '554 5.7.1 No SMTP service here', 'EPROTOCOL'), { kind: 'sender', code: 'smtp_relay_refused', reason: 'the relay refused the session (554 5.7.1)', scope: 'channel' }],
    ['EHLO 550', smtp('EHLO', '550 5.7.1 go away', 'ECONNECTION'), { kind: 'sender', code: 'smtp_relay_refused', reason: 'the relay refused the session (550 5.7.1)', scope: 'channel' }],
    ['a lost connection mid-conversation', smtp('CONN', null, 'ECONNECTION'), { kind: 'soft', code: 'smtp_unreachable', reason: 'connection closed by the server (ECONNECTION)', senderWhenExhausted: true }],
  ];
  for (const [name, error, expected] of cases) {
    it(`SMTP: ${name}`, () => {
      const verdict = classifySmtpFailure(smtpFailureOf(error));
      expect(verdict).to.deep.equal(expected);
      // Never the server's own words.
      const response = (error as { response?: string }).response;
      if (response) expect(verdict.reason).not.to.contain(response.replace(/^\d{3} (\d\.\d+\.\d+ )?/, ''));
    });
  }

  const graph: Array<[string, { status: number | null; code: number | null; error: string }, { kind: string; code: string; reason: string; scope?: string; senderWhenExhausted?: boolean }]> = [
    ['190 token expired', { status: 401, code: 190, error: '190: Error validating access token' }, { kind: 'sender', code: 'whatsapp_token_expired', reason: 'the access token expired or was revoked (190)', scope: 'channel' }],
    ['368 restricted', { status: 400, code: 368, error: '368: Temporarily blocked' }, { kind: 'sender', code: 'whatsapp_account_restricted', reason: 'the account is restricted for policy violations (368)', scope: 'channel' }],
    ['131031 locked', { status: 400, code: 131031, error: '131031: Account locked' }, { kind: 'sender', code: 'whatsapp_account_locked', reason: 'the business account is locked (131031)', scope: 'channel' }],
    ['131042 payment', { status: 400, code: 131042, error: '131042: Business eligibility payment issue' }, { kind: 'sender', code: 'whatsapp_payment_issue', reason: 'the business account has a payment issue (131042)', scope: 'channel' }],
    ['131048 spam rate limit', { status: 400, code: 131048, error: '131048: Spam rate limit hit' }, { kind: 'sender', code: 'whatsapp_spam_rate_limit', reason: "the number is limited for its messages' quality (131048)", scope: 'channel' }],
    ...[132000, 132001, 132005, 132007, 132012, 132015, 132016].map(
      (code) =>
        [`${code} template`, { status: 400, code, error: `${code}: template problem` }, { kind: 'sender', code: 'whatsapp_template_error', reason: `Graph refused the step's template (${code})`, scope: 'template' }] as (typeof graph)[number],
    ),
    ['401 with no code', { status: 401, code: null, error: 'http 401' }, { kind: 'sender', code: 'whatsapp_unauthorized', reason: 'Graph refused the access token (http 401)', scope: 'channel' }],
    ['131026 undeliverable stays a final failure', { status: 400, code: 131026, error: '131026: Message undeliverable' }, { kind: 'rejected', code: 'whatsapp_rejected', reason: '131026: Message undeliverable' }],
    ['131050 stopped marketing stays a final failure', { status: 400, code: 131050, error: '131050: User has stopped marketing messages' }, { kind: 'rejected', code: 'whatsapp_rejected', reason: '131050: User has stopped marketing messages' }],
    ['130429 rate limit', { status: 400, code: 130429, error: '130429: Rate limit hit' }, { kind: 'soft', code: 'whatsapp_deferred', reason: '130429: Rate limit hit' }],
    ['503', { status: 503, code: null, error: 'http 503' }, { kind: 'soft', code: 'whatsapp_deferred', reason: 'http 503' }],
    ['no answer', { status: null, code: null, error: 'timeout after 10000 ms' }, { kind: 'soft', code: 'whatsapp_unreachable', reason: 'timeout after 10000 ms', senderWhenExhausted: true }],
  ];
  for (const [name, failure, expected] of graph) {
    it(`WhatsApp: ${name}`, () => {
      expect(classifyWhatsAppFailure(failure)).to.deep.equal(expected);
    });
  }
});
