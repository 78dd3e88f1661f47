import type { SendMailOptions } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type { SmtpRelays, SmtpTimeouts } from './smtp-pools';

// What the service's thread and the SMTP thread (smtp-thread.ts, smtp-thread-worker.ts) say to
// each other. Everything crosses by structured clone: the message as buildEmail() makes it
// (strings, a Date, the DKIM key as text), and the answer or the failure as plain fields.

export interface SmtpThreadData {
  timeouts: SmtpTimeouts;
  relays?: SmtpRelays;
}

export type SmtpThreadRequest =
  | { type: 'send'; id: number; smtpUrl: string; mail: SendMailOptions }
  | { type: 'verify'; id: number; smtpUrl: string }
  // The service stopping cuts a send short (its `stop` signal, smtp-attempt.ts).
  | { type: 'abort'; id: number }
  | { type: 'close' };

export type SmtpThreadReply =
  | { id: number; ok: true; info?: SMTPPool.SentMessageInfo; verified?: boolean }
  | { id: number; ok: false; error: ErrorFields };

// A failure's message and the fields send-failures.ts and smtp-attempt.ts read (code, command,
// responseCode, response, originalCode, ownWords, unknownOutcome): a structured clone of an
// Error keeps only its message.
export interface ErrorFields {
  name: string;
  message: string;
  fields: Record<string, string | number | boolean | null>;
}

export function errorFields(error: unknown): ErrorFields {
  const failure = error instanceof Error ? error : new Error(String(error));
  const fields: ErrorFields['fields'] = {};
  for (const [key, value] of Object.entries(failure)) {
    if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return { name: failure.name, message: failure.message, fields };
}

export function errorFrom({ name, message, fields }: ErrorFields): Error {
  const error = Object.assign(new Error(message), fields);
  error.name = name;
  return error;
}
