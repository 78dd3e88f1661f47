// Who caused a failed send, decided in one place (docs/channels.md "Bounces, classified"): the
// recipient (a hard bounce: the address is suppressed), the content or the receiver's policy
// (the message fails, no one is suppressed), a passing condition (soft: tried again on the
// retry schedule), or the sender (a refused login, a relay that refuses our MAIL FROM, TLS, an
// expired token, a template Graph does not take: the channel, or that step's template, pauses
// and no contact is touched). Pure: a nodemailer error or a Graph answer in, a verdict out.
//
// The verdict's `reason` is what a tenant sees (a message's error, an execution's reason, a
// channel.paused event): our words and the codes, never the remote server's banner or answer
// text (a relay URL pointed at another service must not read that service's banner back).

// How a recipient's soft bounce (a 4xx on RCPT or after the data) starts, and nothing else.
export const SOFT_BOUNCE_PREFIX = 'deferred: ';

export type FailureKind = 'hard_bounce' | 'rejected' | 'soft' | 'sender';

export interface SendFailureVerdict {
  kind: FailureKind;
  // A short key for the event and the metric (`smtp_auth_failed`, `whatsapp_token_expired`).
  code: string;
  reason: string;
  // A sender failure's reach: the account's whole channel, or only the step's template.
  scope?: 'channel' | 'template';
  // A soft failure that, still failing when the retry schedule is spent, is the sender's (a
  // relay or Graph that cannot be reached): the channel pauses instead of the message failing.
  senderWhenExhausted?: boolean;
}

// Where in the SMTP conversation it failed.
export type SmtpStage = 'connect' | 'ehlo' | 'tls' | 'auth' | 'mail' | 'rcpt' | 'data' | 'other';

export interface SmtpFailure {
  stage: SmtpStage;
  // The server's reply code (550), when it answered.
  responseCode: number | null;
  // The RFC 3463 enhanced status code of its reply (5.1.1), when it gave one.
  enhanced: string | null;
  // nodemailer's code, or the system's beneath it (ECONNREFUSED, ENOTFOUND, ETIMEDOUT, EAUTH).
  code: string | null;
  // Our own words, when the service itself cut the attempt (smtp-attempt.ts: a stage's bound,
  // a stop): they say which wait ran out, and are never a server's text.
  words?: string;
}

// What nodemailer's error says (its `command`, `responseCode`, `response`, `code` and the
// system's `originalCode`: node_modules/nodemailer/dist/cjs/smtp-connection/index.js sets them
// per stage: CONN for the connection and greeting, EHLO/HELO/LHLO, STARTTLS, AUTH <method>,
// MAIL FROM, RCPT TO, DATA; ETLS for TLS wherever it fails).
export function smtpFailureOf(error: unknown): SmtpFailure {
  const failure = (error ?? {}) as { code?: unknown; originalCode?: unknown; command?: unknown; responseCode?: unknown; response?: unknown };
  const code = typeof failure.code === 'string' ? failure.code : null;
  const original = typeof failure.originalCode === 'string' ? failure.originalCode : null;
  const command = typeof failure.command === 'string' ? failure.command.toUpperCase() : '';
  const responseCode = typeof failure.responseCode === 'number' ? failure.responseCode : null;
  const response = typeof failure.response === 'string' ? failure.response : '';
  const enhanced = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(response.trim())?.[1] ?? null;
  const own = error as { ownWords?: unknown; message?: unknown } | null;
  const words = own?.ownWords === true && typeof own.message === 'string' ? own.message : undefined;
  return { stage: stageOf(command, code, original), responseCode, enhanced, code: original ?? code, ...(words && { words }) };
}

// The system's codes of a certificate or handshake that failed (Node's TLS and OpenSSL's).
const TLS_CODE = /^(CERT_|ERR_TLS|ERR_SSL|ERR_OSSL|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

function stageOf(command: string, code: string | null, original: string | null): SmtpStage {
  if (code === 'ETLS' || command === 'STARTTLS' || (original !== null && TLS_CODE.test(original))) return 'tls';
  if (code === 'EAUTH' || command.startsWith('AUTH')) return 'auth';
  if (command === 'MAIL FROM') return 'mail';
  if (command === 'RCPT TO') return 'rcpt';
  if (command === 'DATA') return 'data';
  if (command === 'EHLO' || command === 'HELO' || command === 'LHLO') return 'ehlo';
  if (command === 'CONN') return 'connect';
  return 'other';
}

// Our words for the system's connection failures.
const CONNECTION_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (for now)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  ECONNECTION: 'connection closed by the server',
  ESOCKET: 'connection failed',
  EDNS: 'host not found',
  EPROTOCOL: 'the server did not answer as an SMTP server',
};

// Our words for the recipient's enhanced codes a hard bounce has (RFC 3463 §3.2, §3.3).
function recipientWords(enhanced: string | null): string {
  if (enhanced === null) return 'the address was refused';
  const [, subject, detail] = enhanced.split('.');
  if (subject === '1') return detail === '1' ? 'no such mailbox' : detail === '2' ? 'no such domain' : 'the address was refused';
  if (subject === '2') return 'the mailbox is disabled';
  return 'the address was refused';
}

const codes = (failure: SmtpFailure) => [failure.responseCode, failure.enhanced].filter((part) => part !== null).join(' ');

// The SMTP verdict, in the order the issue gives: the sender's own stages first (a 4xx there is
// still only soft), then the recipient's.
// A permanent (5.x.x) RFC 3463 code, by whom it names: the recipient's address (5.1.x, 5.2.1,
// 5.5.x: a hard bounce, the address suppressed), or anything else, policy and content (5.7.x)
// among it (rejected: the message fails, no one is suppressed). Shared by the answers when
// sending and the DSNs that come back later (bounces/report-feedback.ts).
export function permanentEnhancedKind(enhanced: string): 'hard_bounce' | 'rejected' {
  const [, subject, detail] = enhanced.split('.');
  return subject === '1' || (subject === '2' && detail === '1') || subject === '5' ? 'hard_bounce' : 'rejected';
}

export function classifySmtpFailure(failure: SmtpFailure): SendFailureVerdict {
  const { stage, responseCode, enhanced } = failure;
  const answered = responseCode !== null;
  const permanent = answered && responseCode >= 500;
  const temporary = answered && responseCode >= 400 && responseCode < 500;
  const shown = codes(failure);

  if (stage === 'tls') return { kind: 'sender', code: 'smtp_tls_failed', reason: `smtp tls failed (${shown || (failure.code ?? 'ETLS')})`, scope: 'channel' };
  if (stage === 'auth') {
    if (temporary) return { kind: 'soft', code: 'smtp_auth_deferred', reason: `smtp auth deferred (${shown})` };
    return { kind: 'sender', code: 'smtp_auth_failed', reason: `smtp auth failed (${shown || (failure.code ?? 'EAUTH')})`, scope: 'channel' };
  }
  if (stage === 'mail') {
    if (temporary) return { kind: 'soft', code: 'smtp_sender_deferred', reason: `smtp sender deferred (${shown})` };
    return { kind: 'sender', code: 'smtp_sender_refused', reason: `smtp sender refused (${shown || (failure.code ?? 'EENVELOPE')})`, scope: 'channel' };
  }
  if (stage === 'connect' || stage === 'ehlo' || stage === 'other') {
    // A greeting or EHLO that refuses us for good (554 no service for you) is the relay's word on
    // the sender; a 421 or a lost, refused or silent connection is tried again, and pauses the
    // channel only once the whole retry schedule has failed.
    if (permanent) return { kind: 'sender', code: 'smtp_relay_refused', reason: `the relay refused the session (${shown})`, scope: 'channel' };
    if (temporary) return { kind: 'soft', code: 'smtp_deferred', reason: `the relay deferred the session (${shown})`, senderWhenExhausted: true };
    const system = failure.code ?? 'ESOCKET';
    return { kind: 'soft', code: 'smtp_unreachable', reason: `${failure.words ?? CONNECTION_WORDS[system] ?? 'connection failed'} (${system})`, senderWhenExhausted: true };
  }
  // RCPT TO, DATA (its command or the reply after the final dot). Only the recipient's soft
  // bounces read `deferred: …` (SOFT_BOUNCE_PREFIX): what soft-bounces.ts counts.
  if (temporary || enhanced?.startsWith('4.')) return { kind: 'soft', code: 'soft_bounce', reason: `${SOFT_BOUNCE_PREFIX}${shown} the receiving server asked us to try again later` };
  if (!permanent) {
    const system = failure.code ?? 'ESOCKET';
    return { kind: 'soft', code: 'smtp_unreachable', reason: `${failure.words ?? CONNECTION_WORDS[system] ?? 'connection failed'} (${system})` };
  }
  if (enhanced !== null) {
    if (permanentEnhancedKind(enhanced) === 'hard_bounce') {
      return { kind: 'hard_bounce', code: 'hard_bounce', reason: `bounced: ${shown} ${recipientWords(enhanced)}` };
    }
    if (enhanced.split('.')[1] === '7') return { kind: 'rejected', code: 'rejected', reason: `rejected: ${shown} refused by the receiver's policy` };
    return { kind: 'rejected', code: 'rejected', reason: `rejected: ${shown} the receiving server refused the message` };
  }
  // No enhanced code: RFC 5321's mailbox replies on RCPT (550, 551, 553) are the recipient's;
  // anything else (552, 554, or a reply after the data) fails the message and suppresses no one.
  if (stage === 'rcpt' && (responseCode === 550 || responseCode === 551 || responseCode === 553)) {
    return { kind: 'hard_bounce', code: 'hard_bounce', reason: `bounced: ${shown} the address was refused` };
  }
  return { kind: 'rejected', code: 'rejected', reason: `rejected: ${shown} the receiving server refused the message` };
}

// Graph's sender-side codes (developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes):
// the channel's (the token, the account, its payment method, its spam rate limit) and the
// template's (the step's template: its parameters, name, translation, pausing or disabling).
const WHATSAPP_CHANNEL: Record<number, { code: string; words: string }> = {
  190: { code: 'whatsapp_token_expired', words: 'the access token expired or was revoked' },
  368: { code: 'whatsapp_account_restricted', words: 'the account is restricted for policy violations' },
  131031: { code: 'whatsapp_account_locked', words: 'the business account is locked' },
  131042: { code: 'whatsapp_payment_issue', words: 'the business account has a payment issue' },
  131048: { code: 'whatsapp_spam_rate_limit', words: 'the number is limited for its messages\' quality' },
};
const WHATSAPP_TEMPLATE = new Set([132000, 132001, 132005, 132007, 132012, 132015, 132016]);
// Graph's rate limits: the number's throughput (130429), too many to one user (131056), the
// app's or the account's call limits (4, 80007).
const WHATSAPP_RATE_LIMITS = new Set([130429, 131056, 4, 80007]);

export interface WhatsAppFailure {
  // Graph's HTTP status; null when no answer came (a timeout, a refused or lost connection).
  status: number | null;
  // Graph's error.code, when its answer had one.
  code: number | null;
  // The client's text (`131026: Message undeliverable`, `timeout after 10000 ms`).
  error: string;
}

export function classifyWhatsAppFailure(failure: WhatsAppFailure): SendFailureVerdict {
  const { status, code } = failure;
  if (code !== null && WHATSAPP_CHANNEL[code]) {
    const known = WHATSAPP_CHANNEL[code];
    return { kind: 'sender', code: known.code, reason: `${known.words} (${code})`, scope: 'channel' };
  }
  if (code !== null && WHATSAPP_TEMPLATE.has(code)) {
    return { kind: 'sender', code: 'whatsapp_template_error', reason: `Graph refused the step's template (${code})`, scope: 'template' };
  }
  if (status === 401) return { kind: 'sender', code: 'whatsapp_unauthorized', reason: `Graph refused the access token (http 401${code !== null ? ` ${code}` : ''})`, scope: 'channel' };
  if (status === null) return { kind: 'soft', code: 'whatsapp_unreachable', reason: failure.error, senderWhenExhausted: true };
  if (status === 429 || status >= 500 || (code !== null && WHATSAPP_RATE_LIMITS.has(code))) return { kind: 'soft', code: 'whatsapp_deferred', reason: failure.error };
  // Any other 4xx (131026 undeliverable and 131050 the user stopped marketing messages among
  // them): the message fails for good, as Graph says, with its code.
  return { kind: 'rejected', code: 'whatsapp_rejected', reason: failure.error };
}
