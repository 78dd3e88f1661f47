import { promises as dns } from 'node:dns';

// DNS TXT lookups for the sending domains' checks (sending-domains.ts). The resolver is passed
// in (ChannelSettings.resolveTxt; tests give their own), node:dns's resolveTxt otherwise: same
// shape, each record as the strings it is split into.
export type TxtResolver = (name: string) => Promise<string[][]>;

export const DEFAULT_TXT_TIMEOUT_MS = 5_000;

// What one lookup saw: the records (each joined, as receivers read them), none, or no answer.
export type TxtLookup = { ok: true; records: string[] } | { ok: false; problem: string };

// A name with no records (NXDOMAIN, NODATA) is an empty answer, not a failure.
const NO_RECORDS = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'NODATA']);

export async function lookupTxt(name: string, resolver: TxtResolver = dns.resolveTxt, timeoutMs = DEFAULT_TXT_TIMEOUT_MS): Promise<TxtLookup> {
  let timer: NodeJS.Timeout | undefined;
  // Bounded whatever the resolver does: node:dns's own timeout applies per try, and it retries.
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEOUT' })), timeoutMs);
  });
  try {
    const answer = await Promise.race([resolver(name), timeout]);
    return { ok: true, records: answer.map((parts) => parts.join('')) };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code && NO_RECORDS.has(code)) return { ok: true, records: [] };
    return { ok: false, problem: code === 'ETIMEOUT' ? `the lookup of ${name} timed out` : `the lookup of ${name} failed (${code ?? 'error'})` };
  } finally {
    clearTimeout(timer);
  }
}
