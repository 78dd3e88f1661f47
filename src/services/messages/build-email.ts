import type { SendMailOptions } from 'nodemailer';
import type { EmailSender } from '../channels/senders';
import type { MessageAddresses } from '../bounces/bounce-addresses';

// An email as the service sends it, whoever sends it: a step's message (the engine's email
// channel) and the message editor's test send build it here, so a test carries the same From,
// Reply-To, Message-ID, List-Unsubscribe headers and DKIM signature as a real send.

export interface EmailParts {
  // The message's key: its Message-ID at the sender's domain.
  messageKey: string;
  from: string;
  to: string;
  replyTo: string | null;
  rendered: { subject: string; html: string; text: string };
  // The recipient's one-click unsubscribe link (RFC 8058).
  unsubscribeLink: string;
  dkim: EmailSender['dkim'];
  // Nodemailer reads the Date header from here; the caller's clock keeps tests exact.
  date: Date;
  // The envelope sender (VERP), the unsubscribe mailbox and the Feedback-ID
  // (src/services/bounces/bounce-addresses.ts).
  addresses: MessageAddresses;
  // The targets of the html's tracked links (src/services/signals/tracked-html.ts), kept in the
  // message's content: the click redirect reads its target there.
  links?: string[];
}

export interface BuiltEmail {
  mail: SendMailOptions;
  // What the messages row keeps of it (`content`, written before any server is called).
  content: { from: string; to: string; returnPath?: string; subject: string; html: string; text: string; headers: Record<string, string>; links?: string[] };
}

// The Message-ID of a message: its key at the sender's domain. The key is the same on every
// attempt, so a server or a mailbox that sees the message twice sees one Message-ID.
export function emailMessageId(messageKey: string, from: string): string {
  const domain = /@([^@>\s]+)>?\s*$/.exec(from)?.[1] ?? 'localhost';
  return `<${messageKey}@${domain}>`;
}

export function buildEmail(parts: EmailParts): BuiltEmail {
  const { from, to, replyTo, rendered } = parts;
  const messageId = emailMessageId(parts.messageKey, from);
  const { returnPath, unsubscribeMailto, feedbackId } = parts.addresses;
  const headers: Record<string, string> = {
    'List-Unsubscribe': unsubscribeMailto ? `<${parts.unsubscribeLink}>, <${unsubscribeMailto}>` : `<${parts.unsubscribeLink}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    'Feedback-ID': feedbackId,
  };
  const mail: SendMailOptions = {
    from,
    to,
    // MAIL FROM: where late bounces go. The From header stays the account's.
    ...(returnPath ? { envelope: { from: returnPath, to } } : {}),
    replyTo: replyTo ?? undefined,
    subject: rendered.subject,
    html: rendered.html,
    text: rendered.text,
    messageId,
    headers,
    date: parts.date,
    dkim: parts.dkim
      ? {
          ...parts.dkim,
          headerFieldNames: 'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:List-Unsubscribe:List-Unsubscribe-Post:Feedback-ID',
        }
      : undefined,
  };
  const content = { from, to, ...(returnPath ? { returnPath } : {}), subject: rendered.subject, html: rendered.html, text: rendered.text, headers: { ...headers, 'Message-ID': messageId, ...(replyTo ? { 'Reply-To': replyTo } : {}) }, ...(parts.links && parts.links.length > 0 ? { links: parts.links } : {}) };
  return { mail, content };
}
