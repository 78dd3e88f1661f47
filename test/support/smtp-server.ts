import type { AddressInfo, Socket } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

// A real SMTP server on port 0 for the sender's tests: each message the test lets through is
// kept raw and parsed (mailparser). `answer(i)` says what the i-th DATA gets: 'accept', an SMTP
// error code (451, 550), 'destroy' (the connection is cut before any answer), 'hang' (the
// server takes the data and never answers), 'hold' (as 'hang' until the test calls release():
// then accepted), or a whole reply ('550 5.1.1 No such user').
// `options.rcpt(address)` answers RCPT TO the same way (undefined: accepted), and `options.auth`
// asks for a login (AUTH PLAIN/LOGIN), checked against `auth.password()` at each login, so a
// test can change the relay's password while mail flows.

export type SmtpAnswer = 'accept' | 'destroy' | 'hang' | 'hold' | number | string;

// A reply code with its text (an enhanced code, when given, starts the text).
function refusal(given: number | string): Error {
  if (typeof given === 'number') return Object.assign(new Error(given >= 500 ? 'mailbox unavailable' : 'try again later'), { responseCode: given });
  const [, code, text] = /^(\d{3}) ?(.*)$/.exec(given) ?? [];
  return Object.assign(new Error(text || 'refused'), { responseCode: Number(code) });
}

export interface ReceivedMail {
  raw: string;
  parsed: ParsedMail;
  envelope: { from: string; to: string[] };
  // Whether the session had upgraded to TLS (STARTTLS) when the message came.
  secure: boolean;
}

export interface SmtpServerOptions {
  startTls?: boolean;
  rcpt?: (address: string) => SmtpAnswer | undefined;
  auth?: { user: string; password: () => string };
  // false: accepted messages are counted by Message-ID only (messageIds), not kept and parsed
  // (a campaign-sized test: parsing 2,000 messages is most of its time).
  parse?: boolean;
}

export async function startSmtpServer(answer: (index: number) => SmtpAnswer = () => 'accept', options: SmtpServerOptions = {}) {
  const received: ReceivedMail[] = [];
  const attempts: string[] = [];
  const sockets = new Set<Socket>();
  // Each login tried, and whether it was let in.
  const logins: Array<{ user: string; ok: boolean }> = [];
  // The Message-ID of every message accepted, in order.
  const messageIds: string[] = [];
  let queueId = 0;
  // The DATAs answered 'hold', each waiting for release() to accept it.
  const held: Array<() => void> = [];
  // An accepted DATA: counted by its Message-ID, kept and parsed unless told otherwise.
  function accept(raw: string, session: SMTPServerSession, callback: (error?: Error | null, message?: string) => void): void {
    messageIds.push(/^Message-ID:\s*(<[^>]*>)/im.exec(raw)?.[1] ?? '');
    if (options.parse === false) {
      queueId += 1;
      callback(null, `queued as Q${queueId}`);
      return;
    }
    void simpleParser(raw).then((parsed) => {
      received.push({
        raw,
        parsed,
        envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((rcpt) => rcpt.address) },
        secure: Boolean(session.secure),
      });
      queueId += 1;
      callback(null, `queued as Q${queueId}`);
    });
  }
  const server = new SMTPServer({
    authOptional: !options.auth,
    // STARTTLS offered only when asked (smtp-server's own self-signed certificate); AUTH only
    // when a login is asked for (over plain text: the test's loopback).
    disabledCommands: [...(options.startTls ? [] : ['STARTTLS']), ...(options.auth ? [] : ['AUTH'])],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, callback) {
      const ok = Boolean(options.auth) && auth.username === options.auth!.user && auth.password === options.auth!.password();
      logins.push({ user: auth.username ?? '', ok });
      if (!ok) {
        callback(Object.assign(new Error('5.7.8 Error: authentication failed: the banner of a secret service'), { responseCode: 535 }));
        return;
      }
      callback(null, { user: auth.username });
    },
    onRcptTo(address, _session, callback) {
      const given = options.rcpt?.(address.address);
      if (given === undefined || given === 'accept') {
        callback();
        return;
      }
      callback(refusal(given as number | string));
    },
    logger: false,
    onConnect(_session, callback) {
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const index = attempts.length;
        attempts.push(raw);
        const given = answer(index);
        if (given === 'hang') return;
        if (given === 'hold') {
          held.push(() => accept(raw, session, callback));
          return;
        }
        if (given === 'destroy') {
          // The connection lost before the answer: the client cannot know what happened.
          for (const socket of sockets) socket.destroy();
          return;
        }
        if (given !== 'accept') {
          callback(refusal(given));
          return;
        }
        accept(raw, session, callback);
      });
    },
  });
  server.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    // Every DATA the server got, whatever it answered.
    attempts,
    logins,
    messageIds,
    // Accepts the DATAs held so far ('hold').
    release() {
      for (const answer of held.splice(0)) answer();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
