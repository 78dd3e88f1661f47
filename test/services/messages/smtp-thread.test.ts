import { expect } from 'chai';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { buildEmail } from '../../../src/services/messages/build-email';
import { isUnknownOutcome } from '../../../src/services/messages/smtp-attempt';
import { SmtpTransports, smtpErrorVerdict } from '../../../src/services/messages/smtp-transports';
import { dkimPrivateKey } from '../../support/channels';
import { startSmtpServer, type SmtpAnswer } from '../../support/smtp-server';

// The relays' pools on their own thread (smtp-thread.ts, the default with more than one core)
// against the same pools on the caller's thread: the same message arrives (headers, parts, a
// DKIM signature that verifies), the same failures come back (codes, the verdict, an unknown
// outcome after the final dot), and every stage's bound and a stop still cut a send short.
// A real SMTP server (smtp-server) on 127.0.0.1.

const TIMEOUTS = { connectionMs: 1_000, greetingMs: 1_000, socketMs: 300 };

function mail(key: string) {
  return buildEmail({
    messageKey: key,
    from: 'Shop <shop@example.com>',
    to: 'ada@example.com',
    replyTo: 'help@example.com',
    rendered: { subject: 'Hi Ada', html: '<p>Hi Ada</p>', text: 'Hi Ada' },
    unsubscribeLink: 'https://svc.example.com/u/abc',
    dkim: { domainName: 'example.com', keySelector: 's1', privateKey: dkimPrivateKey() },
    date: new Date('2026-12-01T10:00:00.000Z'),
    addresses: { returnPath: 'bounce+x@example.com', unsubscribeMailto: null, feedbackId: 'a:b:c:svc' },
  } as Parameters<typeof buildEmail>[0]).mail;
}

// The headers that say what the message is (the MIME boundaries and the signature's b= differ
// from one composition to the next).
function headersOf(raw: string): string[] {
  const head = raw.split('\r\n\r\n')[0]!.replace(/\r\n[ \t]+/g, ' ');
  return head
    .split('\r\n')
    .filter((line) => !/^(content-type|dkim-signature):/i.test(line))
    .sort();
}

describe('SMTP pools on a thread of their own', function () {
  this.timeout(20_000);
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function both(answer?: (index: number) => SmtpAnswer) {
    const server = await startSmtpServer(answer);
    const threaded = new SmtpTransports(TIMEOUTS, undefined, { thread: true });
    const here = new SmtpTransports(TIMEOUTS, undefined, { thread: false });
    cleanups.push(() => server.close(), () => threaded.close(), () => here.close());
    expect(threaded.threaded).to.equal(true);
    expect(here.threaded).to.equal(false);
    return { server, threaded, here };
  }

  it('sends the same message as the pools on this thread: headers, envelope, parts, and a DKIM signature that verifies', async () => {
    const { server, threaded, here } = await both();
    const fromThread = await threaded.send(server.url, mail('k1'));
    const fromHere = await here.send(server.url, mail('k1'));
    expect(fromThread.messageId).to.equal('<k1@example.com>');
    expect(fromThread.accepted).to.deep.equal(fromHere.accepted);
    expect([fromThread.response, fromHere.response]).to.deep.equal(['250 queued as Q1', '250 queued as Q2']);
    const [a, b] = server.received;
    expect(headersOf(a!.raw)).to.deep.equal(headersOf(b!.raw));
    expect(a!.envelope).to.deep.equal(b!.envelope);
    expect(a!.envelope).to.deep.equal({ from: 'bounce+x@example.com', to: ['ada@example.com'] });
    expect([a!.parsed.html, a!.parsed.text]).to.deep.equal([b!.parsed.html, b!.parsed.text]);
    const publicKey = (await import('node:crypto')).createPublicKey(dkimPrivateKey()).export({ type: 'spki', format: 'der' }).toString('base64');
    const verified = await dkimVerify(Buffer.from(a!.raw), {
      resolver: async (name: string, type: string) => {
        if (name === 's1._domainkey.example.com' && type === 'TXT') return [[`v=DKIM1; k=rsa; p=${publicKey}`]];
        throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      },
    });
    expect(verified.results.map((result: { status: { result: string } }) => result.status.result)).to.deep.equal(['pass']);
  });

  it('answers a refusal as the pools here do: its code, stage and verdict', async () => {
    const { server, threaded, here } = await both(() => '550 5.1.1 No such user');
    const failures: unknown[] = [];
    for (const transports of [threaded, here]) failures.push(await transports.send(server.url, mail('k2')).catch((error: unknown) => error));
    const [a, b] = failures as Array<Error & Record<string, unknown>>;
    expect(a).to.be.instanceOf(Error);
    expect({ code: a!.code, command: a!.command, responseCode: a!.responseCode }).to.deep.equal({ code: b!.code, command: b!.command, responseCode: b!.responseCode });
    expect(smtpErrorVerdict(a)).to.deep.equal(smtpErrorVerdict(b));
    expect(smtpErrorVerdict(a).kind).to.equal('hard_bounce');
    expect(isUnknownOutcome(a)).to.equal(false);
  });

  it('cuts a reply to the final dot that never comes at its bound: an unknown outcome, in our words', async () => {
    const { server, threaded } = await both(() => 'hang');
    const began = Date.now();
    const error = (await threaded.send(server.url, mail('k3')).catch((failure: unknown) => failure)) as Error & { code?: string };
    expect(Date.now() - began).to.be.below(3_000);
    expect(isUnknownOutcome(error)).to.equal(true);
    expect(error.code).to.equal('ETIMEDOUT');
    expect(smtpErrorVerdict(error).reason).to.contain('300 ms');
  });

  it("a stop cuts a send short at once: aborted, in our words, and the thread's next send goes", async () => {
    const { server, threaded } = await both((index) => (index === 0 ? 'hang' : 'accept'));
    const stop = new AbortController();
    const sent = threaded.send(server.url, mail('k4'), stop.signal).catch((failure: unknown) => failure);
    while (server.attempts.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    stop.abort();
    const error = (await sent) as Error & { code?: string };
    expect(error.code).to.equal('EABORT');
    expect(isUnknownOutcome(error)).to.equal(true);
    const info = await threaded.send(server.url, mail('k5'));
    expect(info.messageId).to.equal('<k5@example.com>');
  });

  it('verifies a relay (a paused channel\'s probe), and refuses one that is not there', async () => {
    const { server, threaded } = await both();
    expect(await threaded.verify(server.url)).to.equal(true);
    const closed = await startSmtpServer();
    const url = closed.url;
    await closed.close();
    expect(await threaded.verify(url).catch(() => false)).to.equal(false);
  });

  it('starts a thread again after close, for the next send', async () => {
    const { server, threaded } = await both();
    await threaded.send(server.url, mail('k6'));
    threaded.close();
    const info = await threaded.send(server.url, mail('k7'));
    expect(info.messageId).to.equal('<k7@example.com>');
  });
});
