import { BlockList, isIPv4 } from 'node:net';

// Who loaded an open pixel, when it was not the reader's own mail client (docs/activities.md
// "Bots and prefetchers"). Detected from the request alone (its address as express reads it,
// behind TRUST_PROXY, and its User-Agent), and only for proxies that say who they are:
// - Apple Mail Privacy Protection (`apple`): Apple's proxy loads every image of a message when it
//   reaches the device, read or not. Its requests come from Apple's own network, 17.0.0.0/8
//   (Apple's since 1990), and carry the bare User-Agent `Mozilla/5.0` and nothing else. Either is
//   taken as Apple's: an address in 17.0.0.0/8, or a User-Agent that is exactly `Mozilla/5.0`.
// - Gmail's image proxy (`google`): `GoogleImageProxy` in the User-Agent (`Mozilla/5.0 (Windows
//   NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)`). Gmail fetches through
//   it when a message is shown, then serves its own copy: a first open is seen, later ones never.
//   Flagged too, as a load by a proxy rather than by the reader's client.
// - Yahoo's (`yahoo`): `YahooMailProxy` in the User-Agent; like Gmail's.
// Link scanners that follow clicks (corporate gateways) are not told apart: docs say so.

export type Prefetcher = 'apple' | 'google' | 'yahoo';

const APPLE = new BlockList();
APPLE.addSubnet('17.0.0.0', 8, 'ipv4');

// ::ffff:17.1.2.3 (an IPv4 client on a dual-stack socket) is 17.1.2.3.
function appleAddress(ip: string | undefined): boolean {
  if (!ip) return false;
  const v4 = ip.startsWith('::ffff:') && isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
  return isIPv4(v4) && APPLE.check(v4, 'ipv4');
}

export function prefetcherOf(request: { ip?: string; userAgent?: string }): Prefetcher | null {
  const agent = (request.userAgent ?? '').trim();
  if (/GoogleImageProxy/i.test(agent)) return 'google';
  if (/YahooMailProxy/i.test(agent)) return 'yahoo';
  if (agent === 'Mozilla/5.0' || appleAddress(request.ip)) return 'apple';
  return null;
}
