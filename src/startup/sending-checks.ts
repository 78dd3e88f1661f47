import type { Config } from '../config';
import { hasPublicBaseUrl, isLoopbackHost } from '../services/channels/relay-policy';

// Email that really leaves (SMTP_URL's relay is not on this machine) carries unsubscribe links
// to PUBLIC_BASE_URL: without an https:// one they would point at http://localhost:PORT, which
// no recipient reaches and which mailbox providers distrust. The start refuses then; captured
// emails (no SMTP_URL), a relay on loopback (Mailpit) and a relay the operator says keeps what
// it receives (SMTP_URL_CAPTURES: docker-compose.yml's Mailpit, reached by name) only get a
// printed warning.
// (docs/channels.md "Verified sending domains and the DNS records"; an account's own relay is
// held to the same rule when it is saved: 409 public_base_url_required.)

export class StartRefusedError extends Error {
  readonly startRefusal = true;
}

export function checkSendingSetup(config: Pick<Config, 'publicBaseUrl' | 'publicOrigin' | 'channels'>): { warning: string | null } {
  const relay = config.channels.smtpUrl ? new URL(config.channels.smtpUrl) : null;
  if (hasPublicBaseUrl(config)) return { warning: null };
  const catching = relay !== null && config.channels.smtpUrlCaptures;
  if (relay && !isLoopbackHost(relay.hostname) && !catching) {
    throw new StartRefusedError(
      `Refusing to start: SMTP_URL's relay ${relay.host} is not on this machine, so emails really leave, but PUBLIC_BASE_URL is ` +
        `${config.publicOrigin ? `not an https:// URL (${config.publicBaseUrl})` : 'not set'}: every email's unsubscribe link would point at ` +
        `${config.publicBaseUrl}, which recipients cannot reach. Set PUBLIC_BASE_URL to the service's https:// address, or unset SMTP_URL to capture emails instead (SMTP_URL_CAPTURES=true if it is a catching relay such as Mailpit; docs/operations.md).`,
    );
  }
  const where = !relay ? 'captured emails' : catching ? `the catching relay ${relay.host} (SMTP_URL_CAPTURES)` : `the relay on this machine (${relay.host})`;
  return {
    warning: `  Unsubscribe links point at ${config.publicBaseUrl} (PUBLIC_BASE_URL is not an https:// URL): fine for ${where}; a relay that sends for real needs it (docs/operations.md)\n`,
  };
}
