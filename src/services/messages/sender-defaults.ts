import type { Database } from '../../db/database';

// SWAP POINT (h/channels): the account's email sender and the signed one-click unsubscribe link
// come from the channels work (`resolveEmailSender(db, accountId)` with the account's own
// settings, `unsubscribeUrl(accountId, contactId, channel)` with an HMAC-signed token). Until it
// is merged, these stand-ins answer the server-wide defaults with the same signatures, so the
// integrator replaces this module's imports and deletes it. The link below is NOT signed and
// nothing serves it yet.

export interface SenderDefaults {
  // EMAIL_FROM.
  emailFrom: string;
  // PUBLIC_BASE_URL, else the service's own address.
  publicBaseUrl: string;
}

let defaults: SenderDefaults = { emailFrom: 'no-reply@localhost', publicBaseUrl: 'http://localhost:3000' };

// Set once at start-up from the configuration (src/startup/start-process.ts).
export function configureSenderDefaults(settings: Partial<SenderDefaults>): void {
  defaults = {
    emailFrom: settings.emailFrom ?? defaults.emailFrom,
    publicBaseUrl: (settings.publicBaseUrl ?? defaults.publicBaseUrl).replace(/\/+$/, ''),
  };
}

export interface EmailSender {
  from: string;
  replyTo: string | null;
}

export async function resolveEmailSender(_db: Database, _accountId: string): Promise<EmailSender> {
  return { from: defaults.emailFrom, replyTo: null };
}

export function unsubscribeUrl(accountId: string, contactId: string, channel: 'email' | 'whatsapp'): string {
  const token = Buffer.from(`${accountId}.${contactId}.${channel}`).toString('base64url');
  return `${defaults.publicBaseUrl}/u/${token}`;
}
