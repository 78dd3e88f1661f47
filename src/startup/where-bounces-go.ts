import type { Config } from '../config';

// Where late bounces and complaints go, printed at every start beside where email goes
// (docs/channels.md "The bounce domain and the listener"). Without a bounce domain, the
// envelope sender is the From: DSNs reach the From's mailbox, which the service does not read.
export function whereBouncesGo(bounces: Config['bounces'], listening: string | null): string[] {
  const lines: string[] = [];
  if (!bounces.domain) {
    lines.push('  Late bounces and complaints cannot come back: no BOUNCE_DOMAIN, so the envelope sender of each email is its From (docs/channels.md)');
  } else {
    lines.push(`  Envelope sender (Return-Path): bounce+<token>@${bounces.domain}; point its MX at the bounce listener`);
  }
  if (bounces.unsubscribeMailbox) {
    const [local, domain] = bounces.unsubscribeMailbox.split('@');
    lines.push(`  List-Unsubscribe also names mailto:${local}+<token>@${domain} (UNSUBSCRIBE_MAILBOX)`);
  }
  if (listening) lines.push(`  Bounce listener (SMTP): ${listening}, mail for ${[bounces.domain, bounces.unsubscribeMailbox?.split('@')[1]].filter(Boolean).filter((d, i, a) => a.indexOf(d) === i).join(', ')} only`);
  else if (bounces.domain || bounces.unsubscribeMailbox) lines.push('  No bounce listener in this process (BOUNCE_SMTP_PORT): another process must take that mail');
  return lines;
}
