// What the WhatsApp webhook and the recipient-side handling report, if given
// (src/metrics/metrics.ts registers them; docs/messages.md "Metrics"), counted when the change
// commits:
// - whatsapp_inbound_messages_total{outcome}: each inbound message of a signed post: `received`
//   (recorded as message.received), `opt_out` (an opt-out keyword or button), `unknown_number`
//   (no contact of the account has the number: dropped), `unknown_account` (the post's number
//   ID is no account's, or is claimed by several accounts its signature fits: dropped).
// - whatsapp_opt_outs_total{source}: numbers that opted out: `keyword` (a text, button or
//   interactive reply), `status` (a status webhook's 131050), `send` (Graph's 131050 to a send).
// - whatsapp_numbers_invalid_total: numbers suppressed (`invalid`) after 131026 in a row.
export interface WhatsAppInboundMetrics {
  inbound: { inc(labels: { outcome: WhatsAppInboundOutcome }, value?: number): void };
  optOuts: { inc(labels: { source: WhatsAppOptOutSource }, value?: number): void };
  invalidNumbers: { inc(value?: number): void };
}

export const WHATSAPP_INBOUND_OUTCOMES = ['received', 'opt_out', 'unknown_number', 'unknown_account'] as const;
export type WhatsAppInboundOutcome = (typeof WHATSAPP_INBOUND_OUTCOMES)[number];
export const WHATSAPP_OPT_OUT_SOURCES = ['keyword', 'status', 'send'] as const;
export type WhatsAppOptOutSource = (typeof WHATSAPP_OPT_OUT_SOURCES)[number];
