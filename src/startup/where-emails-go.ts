import path from 'node:path';
import { isLoopbackHost } from '../services/channels/relay-policy';

// Where email goes, printed at every start beside where bounces come back: captured to files
// (no SMTP_URL), or the relay SMTP_URL names, by host and port only (its user and password stay
// out of the terminal). A newcomer who starts Mailpit sees here whether the service uses it;
// SMTP_URL is read at start, so a change needs a restart (docs/channels.md).
export function whereEmailsGo(options: { smtpUrl?: string; smtpUrlCaptures: boolean; dataDir: string; engineRuns: boolean }): string | null {
  if (!options.smtpUrl) {
    // Without the engine in this process, a worker sends (and says so at its own start).
    if (!options.engineRuns) return null;
    const outbox = `${path.join(options.dataDir, 'outbox')}${path.sep}`;
    return `  Emails are NOT sent (no SMTP_URL): each is written as an .eml file to ${outbox} (status captured); set SMTP_URL to send (docs/channels.md)`;
  }
  const relay = new URL(options.smtpUrl);
  const address = `${relay.protocol}//${relay.host}`;
  if (options.smtpUrlCaptures) return `  Emails go to ${address} (SMTP_URL), a catching relay (SMTP_URL_CAPTURES): it keeps them, no recipient gets them`;
  if (isLoopbackHost(relay.hostname)) {
    return `  Emails go to the SMTP server on this machine at ${address} (SMTP_URL): what it does with them is its own (Mailpit keeps them, at its web page)`;
  }
  return `  Emails are sent through the relay at ${address} (SMTP_URL): they reach their recipients`;
}
