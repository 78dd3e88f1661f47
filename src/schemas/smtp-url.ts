// An SMTP relay as a URL: smtp://user:pass@host:587 (plain SMTP that upgrades with STARTTLS
// when the server offers it) or smtps://user:pass@host:465 (TLS from the start). nodemailer
// reads the same URL. Pure: src/config.ts checks SMTP_URL with it too.

// Why an SMTP URL is refused, or null.
export function smtpUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an smtp:// or smtps:// URL';
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return 'must start with smtp:// or smtps://';
  if (!url.hostname) return 'must name a host';
  return null;
}

// What may be shown of a relay: its host and port, never its user or password.
export function smtpHost(value: string): string {
  return new URL(value).host;
}
