import type { Database } from '../../db/database';
import { NotFoundError, SecretsKeyMissingError } from '../../errors/app-errors';
import type { ContactDto } from '../../schemas/contact';
import type { ChannelSettings } from '../channels/channel-settings';
import { unsubscribeContact } from '../contacts/contact-operations';
import { findContactRow } from '../contacts/find-contact';
import { signUnsubscribeToken, verifyUnsubscribeToken, type UnsubscribeTarget } from './unsubscribe-token';

// One-click unsubscribe (RFC 8058, RFC 2369; docs/channels.md "One-click unsubscribe").

export const UNSUBSCRIBE_PATH = '/u';

// The List-Unsubscribe URL of a message to this contact on this channel, under PUBLIC_BASE_URL
// (else the service's own address, as setup links are).
export function unsubscribeUrl(settings: ChannelSettings, target: UnsubscribeTarget): string {
  if (!settings.secrets) throw new SecretsKeyMissingError();
  return `${settings.publicBaseUrl}${UNSUBSCRIBE_PATH}/${signUnsubscribeToken(settings.secrets.unsubscribe, target)}`;
}

// What a token names, or a 404 that says nothing more: a token this key did not sign, one
// altered, one whose contact is gone or belongs to another account all read the same.
export function readUnsubscribeToken(settings: ChannelSettings, token: string): UnsubscribeTarget {
  const target = settings.secrets ? verifyUnsubscribeToken(settings.secrets.unsubscribe, token) : null;
  if (!target) throw new NotFoundError('Link');
  return target;
}

// The same, and the contact must still be the account's (the page a GET shows).
export async function findUnsubscribeTarget(db: Database, settings: ChannelSettings, token: string): Promise<UnsubscribeTarget> {
  const target = readUnsubscribeToken(settings, token);
  try {
    await findContactRow(db, { accountId: target.accountId, id: target.contactId });
  } catch (error) {
    if (error instanceof NotFoundError) throw new NotFoundError('Link');
    throw error;
  }
  return target;
}

// Sets the contact's status on the token's channel to unsubscribed through the contacts' one
// write path: one transaction with its events (contact.updated and
// contact.subscription_changed, with source "unsubscribe"), their webhooks, and the exit
// rules it meets. A repeat finds nothing to change and writes nothing.
export async function unsubscribeByToken(db: Database, settings: ChannelSettings, token: string): Promise<ContactDto> {
  const target = readUnsubscribeToken(settings, token);
  try {
    return await unsubscribeContact(db, { accountId: target.accountId, id: target.contactId, channel: target.channel });
  } catch (error) {
    if (error instanceof NotFoundError) throw new NotFoundError('Link');
    throw error;
  }
}
