import type { ChannelSettings } from './channel-settings';

// Pure rules about the domains an email claims (docs/channels.md "Verified sending domains and
// the DNS records"): whose From may go through the shared relay, and which DKIM domain may
// sign it. The stored domains are read by sending-domains.ts; these only compare names.

// The domain of a From (`Shop <news@Shop.Example>` -> shop.example), or null.
export function domainOf(mailbox: string): string | null {
  const address = /<([^<>\s]+)>\s*$/.exec(mailbox.trim())?.[1] ?? mailbox.trim();
  const at = address.lastIndexOf('@');
  if (at < 0) return null;
  return address.slice(at + 1).toLowerCase().replace(/\.$/, '') || null;
}

// A domain is covered by itself and by any parent of it: who controls shop.example's DNS
// controls news.shop.example's.
export function isWithin(domain: string, parent: string): boolean {
  return domain === parent || domain.endsWith(`.${parent}`);
}

// DMARC alignment (relaxed, RFC 7489 3.1.1): a signature aligns with the From when its d= is the
// From's domain or a parent of it.
export function dkimAligns(dkimDomain: string, fromDomain: string): boolean {
  return isWithin(fromDomain, dkimDomain);
}

// The server's own domains: EMAIL_FROM's and BOUNCE_DOMAIN. Verified for every account.
export function operatorDomains(settings: Pick<ChannelSettings, 'emailFrom' | 'bounceDomain'>): string[] {
  const domains = [settings.emailFrom ? domainOf(settings.emailFrom) : null, settings.bounceDomain?.toLowerCase() ?? null];
  return [...new Set(domains.filter((domain): domain is string => Boolean(domain)))];
}

export function isVerified(domain: string, verified: readonly string[]): boolean {
  return verified.some((parent) => isWithin(domain, parent));
}
