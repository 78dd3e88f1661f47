import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { prefetcherOf } from '../../../src/services/signals/prefetchers';
import { trackedHtml } from '../../../src/services/signals/tracked-html';
import { signTrackingToken, verifyTrackingToken } from '../../../src/services/signals/tracking-token';

// The pieces of open and click tracking that need no database: the tokens, the html's rewrite,
// the prefetchers' detection (docs/activities.md "Engagement signals").

const key = randomBytes(32);
const ACCOUNT = '0b6f1c2e-3d4a-4b5c-8d6e-7f8091a2b3c4';
const MESSAGE = '1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5';
const BASE = 'https://svc.example.com';
const UNSUBSCRIBE = `${BASE}/u/${'A'.repeat(67)}`;
const options = { key, publicBaseUrl: BASE, accountId: ACCOUNT, messageId: MESSAGE, opens: false, clicks: true, unsubscribeUrl: UNSUBSCRIBE };

describe('tracking tokens', () => {
  it('verifies what it signed, for its kind only, and nothing altered or signed by another key', () => {
    const token = signTrackingToken(key, { kind: 'click', accountId: ACCOUNT, messageId: MESSAGE, link: 513 });
    expect(token).to.match(/^[A-Za-z0-9_-]{70}$/);
    expect(verifyTrackingToken(key, token, 'click')).to.deep.equal({ kind: 'click', accountId: ACCOUNT, messageId: MESSAGE, link: 513 });
    expect(verifyTrackingToken(key, token, 'open')).to.equal(null);
    expect(verifyTrackingToken(randomBytes(32), token, 'click')).to.equal(null);
    for (let i = 0; i < token.length; i += 7) {
      const altered = `${token.slice(0, i)}${token[i] === 'x' ? 'y' : 'x'}${token.slice(i + 1)}`;
      expect(verifyTrackingToken(key, altered, 'click'), altered).to.equal(null);
    }
    // The last character's spare bits: only the one spelling verifies.
    const last = token.at(-1)!;
    const sibling = 'AEIMQUYcgkosw048'.includes(last) ? String.fromCharCode(last.charCodeAt(0) + 1) : null;
    if (sibling) expect(verifyTrackingToken(key, `${token.slice(0, -1)}${sibling}`, 'click')).to.equal(null);
  });
});

describe('tracked html', () => {
  it('rewrites http(s) links, each distinct target once, and leaves the unsubscribe link, mailto, tel, anchors and our own routes', () => {
    const html =
      `<a href="https://shop.example/a?x=1&amp;y=2">A</a><A HREF='https://shop.example/a?x=1&y=2'>A again</A>` +
      `<a title="b" href=http://shop.example/b>B</a><a href="${UNSUBSCRIBE}">Unsubscribe</a><a href="${BASE}/u/other">U</a>` +
      `<a href="mailto:a@shop.example">M</a><a href="tel:+4930123">T</a><a href="#top">Top</a><a href="">Empty</a><a name="x">No href</a>` +
      `<a href="javascript:alert(1)">J</a>`;
    const { html: out, links } = trackedHtml(html, options);
    expect(links).to.deep.equal(['https://shop.example/a?x=1&y=2', 'http://shop.example/b']);
    const tokens = [...out.matchAll(/\/t\/c\/([A-Za-z0-9_-]{70})"/g)].map((m) => verifyTrackingToken(key, m[1]!, 'click')!.link);
    expect(tokens).to.deep.equal([0, 0, 1]);
    expect(out).to.contain('<a title="b" href="https://svc.example.com/t/c/');
    for (const kept of [`href="${UNSUBSCRIBE}"`, `href="${BASE}/u/other"`, 'href="mailto:a@shop.example"', 'href="tel:+4930123"', 'href="#top"', 'href=""', '<a name="x">', 'href="javascript:alert(1)"']) {
      expect(out).to.contain(kept);
    }
    expect(out).not.to.contain('<img');
  });

  it('adds the pixel before </body>, or at the end of a fragment, and rewrites nothing with clicks off', () => {
    const page = trackedHtml('<html><body><p>Hi <a href="https://shop.example/">shop</a></p></BODY></html>', { ...options, opens: true, clicks: false });
    expect(page.links).to.deep.equal([]);
    expect(page.html).to.contain('<a href="https://shop.example/">');
    expect(page.html).to.match(/<img src="https:\/\/svc\.example\.com\/t\/o\/[A-Za-z0-9_-]{70}" [^>]*\/><\/BODY><\/html>$/);
    const token = /\/t\/o\/([A-Za-z0-9_-]{70})/.exec(page.html)![1]!;
    expect(verifyTrackingToken(key, token, 'open')).to.deep.include({ accountId: ACCOUNT, messageId: MESSAGE });
    expect(trackedHtml('<p>Hi</p>', { ...options, opens: true }).html).to.match(/^<p>Hi<\/p><img /);
  });

  it('is the same html for the same message, so that a send retried carries the same links', () => {
    const html = '<a href="https://shop.example/">x</a>';
    expect(trackedHtml(html, { ...options, opens: true })).to.deep.equal(trackedHtml(html, { ...options, opens: true }));
  });
});

describe('prefetchers', () => {
  it('names Apple\'s proxy by its address (17.0.0.0/8) or its bare User-Agent, Gmail\'s and Yahoo\'s by theirs, and nobody else', () => {
    expect(prefetcherOf({ ip: '17.58.63.12', userAgent: 'Mozilla/5.0 (Macintosh)' })).to.equal('apple');
    expect(prefetcherOf({ ip: '::ffff:17.1.2.3' })).to.equal('apple');
    expect(prefetcherOf({ ip: '203.0.113.9', userAgent: 'Mozilla/5.0' })).to.equal('apple');
    expect(prefetcherOf({ ip: '66.249.84.1', userAgent: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)' })).to.equal('google');
    expect(prefetcherOf({ userAgent: 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html' })).to.equal('yahoo');
    expect(prefetcherOf({ ip: '18.0.0.1', userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)' })).to.equal(null);
    expect(prefetcherOf({ ip: '2001:db8::1' })).to.equal(null);
    expect(prefetcherOf({})).to.equal(null);
  });
});
