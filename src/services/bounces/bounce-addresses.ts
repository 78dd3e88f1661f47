import type { ChannelSettings } from '../channels/channel-settings';
import type { EmailSender } from '../channels/senders';
import { signMessageToken, verifyMessageToken } from './message-token';

// The addresses an email carries for what comes back after it was sent (docs/channels.md "The
// bounce domain and the listener"), and what the listener makes of an address it is sent to.
// - The envelope sender (MAIL FROM, the Return-Path a mailbox sees): `bounce+<token>@<bounce
//   domain>`, where DSNs and most feedback loops go. Without a bounce domain: the From.
// - `List-Unsubscribe: <mailto:<local>+<token>@<domain>>` beside the one-click link, when
//   UNSUBSCRIBE_MAILBOX is set.
// - `Feedback-ID: <sequence>:<step>:<account>:<sender id>` (Gmail's feedback loop), where the
//   sender id is the From address's domain: the identity whose reputation the mailbox provider
//   keeps, the same for every message of that stream. A test send has `test` for its sequence and step.

export const BOUNCE_LOCAL_PREFIX = 'bounce+';

export interface MessageAddresses {
  // The envelope sender; null: the From.
  returnPath: string | null;
  unsubscribeMailto: string | null;
  feedbackId: string;
}

export function messageAddresses(
  settings: Pick<ChannelSettings, 'secrets' | 'unsubscribeMailbox'>,
  sender: Pick<EmailSender, 'bounceDomain'>,
  message: { id: string; accountId: string; sequenceId: string | null; stepId: string | null; from: string },
): MessageAddresses {
  const key = settings.secrets?.bounce;
  const returnPath = key && sender.bounceDomain ? `${BOUNCE_LOCAL_PREFIX}${signMessageToken(key, 'bounce', message.id)}@${sender.bounceDomain}` : null;
  const mailbox = settings.unsubscribeMailbox ? splitAddress(settings.unsubscribeMailbox) : null;
  const unsubscribeMailto = key && mailbox ? `mailto:${mailbox.local}+${signMessageToken(key, 'unsubscribe', message.id)}@${mailbox.domain}?subject=unsubscribe` : null;
  const senderId = splitAddress(/<([^<>]+)>\s*$/.exec(message.from)?.[1] ?? message.from)?.domain ?? 'unknown';
  const feedbackId = [message.sequenceId ?? 'test', message.stepId ?? 'test', message.accountId, senderId].join(':');
  return { returnPath, unsubscribeMailto, feedbackId };
}

// What an RCPT TO names, for the listener:
// - bounce: `bounce+<token>` signed by us, at the bounce domain or an account's own verified
//   bounce domain (a DSN or a report of that message);
// - unsubscribe: the unsubscribe mailbox with a token signed by us;
// - report: another address at the bounce domain (a feedback loop's, postmaster): taken, and
//   only an ARF report that names one of our messages (by its Message-ID) is used;
// - forged: one of those two forms whose token does not verify (refused at RCPT);
// - foreign: any other domain (refused: the listener relays nothing).
export type Recipient =
  | { kind: 'bounce'; messageId: string }
  | { kind: 'unsubscribe'; messageId: string }
  | { kind: 'report' }
  | { kind: 'forged' }
  | { kind: 'foreign' };

export function readRecipient(settings: { key: Buffer; bounceDomain?: string; unsubscribeMailbox?: string }, address: string): Recipient {
  const parts = splitAddress(address);
  if (!parts) return { kind: 'foreign' };
  const mailbox = settings.unsubscribeMailbox ? splitAddress(settings.unsubscribeMailbox) : null;
  if (mailbox && parts.domain === mailbox.domain && parts.local.startsWith(`${mailbox.local}+`)) {
    const messageId = verifyMessageToken(settings.key, 'unsubscribe', parts.local.slice(mailbox.local.length + 1));
    return messageId ? { kind: 'unsubscribe', messageId } : { kind: 'forged' };
  }
  // An account's own verified bounce domain points its MX here too: a bounce address is ours by
  // its signed token, whatever its domain (a token that verifies is never relayed elsewhere).
  if (parts.local.startsWith(BOUNCE_LOCAL_PREFIX) && parts.domain !== settings.bounceDomain) {
    const messageId = verifyMessageToken(settings.key, 'bounce', parts.local.slice(BOUNCE_LOCAL_PREFIX.length));
    if (messageId) return { kind: 'bounce', messageId };
  }
  if (settings.bounceDomain && parts.domain === settings.bounceDomain) {
    if (!parts.local.startsWith(BOUNCE_LOCAL_PREFIX)) return { kind: 'report' };
    const messageId = verifyMessageToken(settings.key, 'bounce', parts.local.slice(BOUNCE_LOCAL_PREFIX.length));
    return messageId ? { kind: 'bounce', messageId } : { kind: 'forged' };
  }
  if (mailbox && parts.domain === mailbox.domain && parts.local === mailbox.local) return { kind: 'forged' };
  return { kind: 'foreign' };
}

// The message a bounce address names (a report's Original-Mail-From, a provider's `source`).
export function messageOfBounceAddress(settings: { key: Buffer; bounceDomain?: string }, address: string): string | null {
  const recipient = readRecipient(settings, address.replace(/^.*<([^<>]*)>.*$/s, '$1').trim());
  return recipient.kind === 'bounce' ? recipient.messageId : null;
}

export function splitAddress(address: string): { local: string; domain: string } | null {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return null;
  return { local: address.slice(0, at).toLowerCase(), domain: address.slice(at + 1).toLowerCase() };
}
