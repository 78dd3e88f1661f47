import { connect, isIP, type Socket } from 'node:net';
import { ConflictError, PUBLIC_BASE_URL_REQUIRED, ValidationError } from '../../errors/app-errors';
import { guardedLookup, isSpecialAddress } from '../webhooks/address-policy';
import type { ChannelSettings } from './channel-settings';

// Where an account's SMTP relay may be (docs/channels.md "Verified sending domains and the DNS
// records"): the webhooks' address policy, so a tenant cannot make the service connect inside
// its own network (a relay on 127.0.0.1:6379 answers with Redis's banner: a port scanner).
// At save, a host written as a refused address (or localhost) is a 400; a name is resolved at
// connect time, by the guarded lookup, and refused there if it resolves inside.

const LOOPBACK_NAMES = /^(localhost|.*\.localhost)$/;

function bareHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
}

// localhost, 127.0.0.0/8, ::1: a relay on this machine (Mailpit), which sends nothing away.
export function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname);
  if (LOOPBACK_NAMES.test(host)) return true;
  const family = isIP(host);
  if (family === 4) return host.startsWith('127.');
  if (family === 6) return host === '::1' || /^::ffff:127\./i.test(host);
  return false;
}

export function isRefusedRelayHost(hostname: string): boolean {
  const host = bareHost(hostname);
  return isLoopbackHost(host) || (isIP(host) !== 0 && isSpecialAddress(host));
}

// Unsubscribe links must reach the service from the recipient's mailbox.
export function hasPublicBaseUrl(settings: Pick<ChannelSettings, 'publicBaseUrl'>): boolean {
  return settings.publicBaseUrl.startsWith('https://');
}

// At save, a 400 naming the field: a host written as a refused address.
export function checkRelayAddress(smtpUrl: string, settings: Pick<ChannelSettings, 'allowPrivateRelays'>, field = 'smtpUrl'): void {
  if (settings.allowPrivateRelays || !isRefusedRelayHost(new URL(smtpUrl).hostname)) return;
  const message = 'must not point to a loopback, private, link-local or other special-use address (SMTP_ALLOW_PRIVATE_RELAYS is off)';
  throw new ValidationError(`${field}: ${message}`, [{ path: field, message }]);
}

// At save, a 409: mail would really leave while its unsubscribe links cannot be right.
export function checkRelayPublicBase(smtpUrl: string, settings: Pick<ChannelSettings, 'publicBaseUrl'>): void {
  if (isLoopbackHost(new URL(smtpUrl).hostname) || hasPublicBaseUrl(settings)) return;
  throw new ConflictError(PUBLIC_BASE_URL_REQUIRED, 'public_base_url_required');
}

export interface GuardedSocketOptions {
  host: string;
  port: number;
  connectionTimeout?: number;
}

// nodemailer resolves a host by itself and takes no `lookup`; it does take `getSocket`, a
// connection it then speaks SMTP (and TLS, with the relay's name for SNI and the certificate) on.
// This one connects through the guarded lookup: the name is resolved once, refused if any
// address is inside, and the checked address is the one connected to (no second lookup a
// rebinding DNS server could answer differently).
export function guardedSmtpSocket(allowPrivate: boolean) {
  const lookup = guardedLookup(allowPrivate);
  return (options: GuardedSocketOptions, callback: (error: Error | null, socketOptions?: { connection: Socket }) => void): void => {
    const host = bareHost(options.host);
    if (!allowPrivate && isIP(host) !== 0 && isSpecialAddress(host)) {
      callback(Object.assign(new Error('the relay\'s address is refused (a loopback, private or link-local address)'), { code: 'EREFUSED_ADDRESS' }));
      return;
    }
    let settled = false;
    const socket = connect({ host, port: options.port, lookup });
    const done = (error: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('error', done);
      if (error) {
        socket.destroy();
        callback(Object.assign(error, { code: (error as { code?: string }).code ?? 'ECONNECTION' }));
      } else callback(null, { connection: socket });
    };
    const timer = setTimeout(() => done(Object.assign(new Error('connection timeout'), { code: 'ETIMEDOUT' })), options.connectionTimeout ?? 10_000);
    socket.once('connect', () => done(null));
    socket.once('error', done);
  };
}
