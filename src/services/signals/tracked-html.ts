import { MAX_TRACKED_LINKS, signTrackingToken } from './tracking-token';

// An email's HTML as it is sent with tracking (docs/activities.md "Engagement signals"):
// - clicks: each <a href> to an http(s) URL becomes PUBLIC_BASE_URL/t/c/<token>; the targets are
//   answered in `links` (each distinct URL once, in order of first appearance) for the message's
//   stored content, and the token names its index there. Left as they are: the unsubscribe link
//   (it must reach /u/ itself, and a click on it is not engagement), any other link to
//   PUBLIC_BASE_URL/u/ or /t/, mailto:, tel:, anchors, and hrefs that are not plain URLs
//   (a Liquid output that rendered empty, javascript:).
// - opens: a 1x1 image PUBLIC_BASE_URL/t/o/<token> before </body> (else at the end).
// The plain-text part is not rewritten: its links stay readable, and a click there is not seen.
// Everything is deterministic (the tokens are HMACs of the message's id): a send retried after a
// crash carries the same links.

export interface TrackingOptions {
  key: Buffer;
  publicBaseUrl: string;
  accountId: string;
  messageId: string;
  opens: boolean;
  clicks: boolean;
  // The message's own unsubscribe link.
  unsubscribeUrl: string;
}

export const OPEN_PATH = '/t/o';
export const CLICK_PATH = '/t/c';

// An <a ...> start tag's href attribute, double-quoted, single-quoted or bare.
const ANCHOR = /<a\b[^>]*>/gi;
const HREF = /(\shref\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/i;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'", '#x27': "'", '#34': '"' };
// What a browser follows: the attribute's value with its character references read (Liquid's
// escaping writes & as &amp; in a URL's query).
const decodeAttribute = (value: string) =>
  value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    const lower = name.toLowerCase();
    if (ENTITIES[lower]) return ENTITIES[lower]!;
    if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16));
    if (lower.startsWith('#')) return String.fromCodePoint(parseInt(lower.slice(1), 10));
    return whole;
  });

function trackable(url: string, options: TrackingOptions): boolean {
  if (url === options.unsubscribeUrl) return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  const ours = `${options.publicBaseUrl}/`;
  // Our own recipient routes: the unsubscribe page and tracking links already made.
  if (url.startsWith(`${ours}u/`) || url.startsWith(`${ours}t/`)) return false;
  return true;
}

export function trackedHtml(html: string, options: TrackingOptions): { html: string; links: string[] } {
  const links: string[] = [];
  const indexOf = new Map<string, number>();
  let out = html;
  if (options.clicks) {
    out = out.replace(ANCHOR, (tag) => {
      const found = HREF.exec(tag);
      if (!found) return tag;
      const raw = found[2] ?? found[3] ?? found[4] ?? '';
      const url = decodeAttribute(raw.trim());
      if (!trackable(url, options)) return tag;
      let index = indexOf.get(url);
      if (index === undefined) {
        // Past the token's range the rest stay as written: a message of 65,536 links is not read by a person.
        if (links.length > MAX_TRACKED_LINKS) return tag;
        index = links.push(url) - 1;
        indexOf.set(url, index);
      }
      const token = signTrackingToken(options.key, { kind: 'click', accountId: options.accountId, messageId: options.messageId, link: index });
      return tag.replace(HREF, `${found[1]}"${options.publicBaseUrl}${CLICK_PATH}/${token}"`);
    });
  }
  if (options.opens) {
    const token = signTrackingToken(options.key, { kind: 'open', accountId: options.accountId, messageId: options.messageId, link: 0 });
    const pixel = `<img src="${options.publicBaseUrl}${OPEN_PATH}/${token}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;
    const end = out.search(/<\/body\s*>/i);
    out = end === -1 ? `${out}${pixel}` : `${out.slice(0, end)}${pixel}${out.slice(end)}`;
  }
  return { html: out, links };
}
