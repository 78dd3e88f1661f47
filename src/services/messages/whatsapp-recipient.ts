// The `to` of a WhatsApp message: the contact's phone in E.164 digits, as the Cloud API takes it
// (`447700900123`). A contact's phone is any text of 3 to 32 characters, so it is read here: a
// leading + (or the international 00) and 7 to 15 digits, spaces, dots, dashes and brackets
// ignored. A number without its country code cannot be dialled from abroad: it is invalid.

export type WhatsAppRecipient = { ok: true; to: string } | { ok: false; reason: 'no_phone' | 'invalid_phone' };

export function whatsappRecipient(phone: string | null | undefined): WhatsAppRecipient {
  if (phone === null || phone === undefined || phone.trim() === '') return { ok: false, reason: 'no_phone' };
  const compact = phone.replace(/[\s.\-()]/g, '');
  const international = /^\+(\d+)$/.exec(compact) ?? /^00(\d+)$/.exec(compact);
  const digits = international?.[1];
  if (!digits || !/^[1-9]\d{6,14}$/.test(digits)) return { ok: false, reason: 'invalid_phone' };
  return { ok: true, to: digits };
}
