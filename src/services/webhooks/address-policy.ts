import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { ValidationError } from '../../errors/app-errors';

// Where webhooks may not go (SSRF): private, loopback, link-local and the other special-use
// ranges of RFC 6890 / the IANA registries, IPv4 and IPv6 (IPv4-mapped IPv6 included).
const special = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16],
  ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) special.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['::ffff:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64],
  ['2001::', 23], ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) special.addSubnet(net, prefix, 'ipv6');

export function isSpecialAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] : undefined;
  if (mapped) return special.check(mapped, 'ipv4');
  return special.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

// At create and update time: https, and no host that is (or is named as) a special address.
// A name is resolved only at delivery time (it may not resolve yet, and may change).
export function checkWebhookUrl(raw: string, allowInsecure: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError('Invalid webhook URL', [{ path: 'url', message: 'must be an absolute URL' }]);
  }
  if (url.username || url.password) {
    throw new ValidationError('Invalid webhook URL', [{ path: 'url', message: 'must not contain credentials' }]);
  }
  if (allowInsecure) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new ValidationError('Invalid webhook URL', [{ path: 'url', message: 'must be http or https' }]);
    }
    return url.toString();
  }
  if (url.protocol !== 'https:') {
    throw new ValidationError('Invalid webhook URL', [{ path: 'url', message: 'must be https' }]);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const name = host.toLowerCase().replace(/\.$/, '');
  if ((isIP(host) !== 0 && isSpecialAddress(host)) || name === 'localhost' || name.endsWith('.localhost')) {
    throw new ValidationError('Invalid webhook URL', [
      { path: 'url', message: 'must not point to a private, loopback, link-local or other special-use address' },
    ]);
  }
  return url.toString();
}

export class RefusedAddressError extends Error {}

// The socket's lookup at delivery time: resolves the name once, refuses it if any address is
// special, and hands the checked address to the connection, so there is no second lookup a
// rebinding DNS server could answer differently.
export function guardedLookup(allowInsecure: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as LookupAddress[];
      const refused = list.find((entry) => isSpecialAddress(entry.address));
      if (!allowInsecure && (refused || list.length === 0)) {
        return callback(new RefusedAddressError(`${hostname} resolves to a refused address`), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
