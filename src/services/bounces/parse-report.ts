import { simpleParser, type ParsedMail } from 'mailparser';

// What a mail to the bounce listener says (docs/channels.md "The bounce domain and the
// listener"), read with mailparser:
// - a DSN (RFC 3464: multipart/report, a message/delivery-status part): each recipient's
//   Action, Status (RFC 3463) and Diagnostic-Code;
// - an ARF report (RFC 5965: multipart/report, a message/feedback-report part): its
//   Feedback-Type and Original-Mail-From;
// - anything else (an auto-reply, a human's answer, garbage): `other`, used for nothing.
// And, for each, the Message-IDs of the original it carries (a message/rfc822 or
// text/rfc822-headers part, or headers pasted inline): our Message-ID is `<message key@domain>`.
// Never throws: a mail that cannot be read is `other`.

export interface DsnRecipient {
  action: string;
  status: string | null;
  diagnostic: string | null;
}

export type ParsedReport =
  | { type: 'dsn'; recipients: DsnRecipient[]; messageIds: string[] }
  | { type: 'arf'; feedbackType: string; originalMailFrom: string | null; messageIds: string[] }
  | { type: 'other'; messageIds: string[] };

const DELIVERY_STATUS = new Set(['message/delivery-status', 'message/global-delivery-status']);
const ORIGINAL = new Set(['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers']);
// A report names one message; more is someone else's mail.
const MAX_MESSAGE_IDS = 5;
const MAX_RECIPIENTS = 50;

export async function parseReport(raw: Buffer): Promise<ParsedReport> {
  let parsed: ParsedMail;
  try {
    // keepDeliveryStatus: the delivery-status part as an attachment, not text (absent from the types).
    const parse = simpleParser as (source: Buffer, options: Record<string, boolean>) => Promise<ParsedMail>;
    parsed = await parse(raw, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true });
  } catch {
    return { type: 'other', messageIds: [] };
  }
  const attachments = parsed.attachments ?? [];
  const messageIds = originalMessageIds(raw, parsed);
  const status = attachments.find((part) => DELIVERY_STATUS.has(part.contentType.toLowerCase()));
  if (status) {
    // The per-message block has no Action: only the per-recipient blocks are kept.
    const recipients = fieldBlocks(status.content.toString('utf8'))
      .filter((fields) => fields.has('action'))
      .slice(0, MAX_RECIPIENTS)
      .map((fields) => ({
        action: fields.get('action')!.toLowerCase().trim(),
        status: /^\d\.\d{1,3}\.\d{1,3}/.exec(fields.get('status')?.trim() ?? '')?.[0] ?? null,
        diagnostic: (fields.get('diagnostic-code')?.replace(/^\s*smtp\s*;\s*/i, '') ?? null)?.slice(0, 500) ?? null,
      }));
    return { type: 'dsn', recipients, messageIds };
  }
  const feedback = attachments.find((part) => part.contentType.toLowerCase() === 'message/feedback-report');
  if (feedback) {
    const [fields] = fieldBlocks(feedback.content.toString('utf8'));
    return {
      type: 'arf',
      feedbackType: (fields?.get('feedback-type') ?? '').trim().toLowerCase(),
      originalMailFrom: fields?.get('original-mail-from')?.trim() ?? null,
      messageIds,
    };
  }
  return { type: 'other', messageIds };
}

// The Message-IDs of the original: from its headers' part, and from any Message-ID header line
// further down the raw mail (a part marked inline is read as text by mailparser), the report's
// own left out.
function originalMessageIds(raw: Buffer, parsed: ParsedMail): string[] {
  const found = new Set<string>();
  for (const part of parsed.attachments ?? []) {
    if (!ORIGINAL.has(part.contentType.toLowerCase())) continue;
    const [headers] = fieldBlocks(part.content.toString('utf8'));
    const id = headers?.get('message-id');
    if (id) found.add(id.trim());
  }
  const text = raw.toString('latin1').replace(/\r?\n[ \t]+/g, ' ');
  for (const match of text.matchAll(/^Message-ID:[ \t]*(<[^<>\r\n]{1,400}>)/gim)) found.add(match[1]!);
  if (parsed.messageId) found.delete(parsed.messageId);
  return [...found].slice(0, MAX_MESSAGE_IDS);
}

// RFC 822-style field blocks (a delivery-status or feedback-report body, a headers part):
// blocks separated by blank lines, folded lines unfolded, names lower-cased; a repeated field
// keeps its first value.
export function fieldBlocks(text: string): Array<Map<string, string>> {
  const blocks: Array<Map<string, string>> = [];
  for (const block of text.replace(/\r\n/g, '\n').split(/\n[ \t]*\n/)) {
    const fields = new Map<string, string>();
    for (const line of block.replace(/\n[ \t]+/g, ' ').split('\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      if (!fields.has(name)) fields.set(name, line.slice(colon + 1).trim());
    }
    if (fields.size > 0) blocks.push(fields);
  }
  return blocks;
}

// The message key in one of our Message-IDs: `<run_..._1@shop.example>` is `run_..._1`.
export function messageKeyOf(messageId: string): string | null {
  const match = /^<([^<>@\s]{1,191})@[^<>@\s]+>$/.exec(messageId.trim());
  return match ? match[1]! : null;
}
