// The rate in force for an account and channel: what it set, never above the server-wide
// limit (lowering EMAIL_MAX_PER_SECOND or WHATSAPP_MAX_PER_SECOND applies at once to every
// account); what it did not set is the server-wide limit.
export function cappedRate(accountRate: number | null, serverLimit: number): number {
  return accountRate === null ? serverLimit : Math.min(accountRate, serverLimit);
}
