import type { AddressInfo, Socket } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

// A real SMTP server on port 0 for the sender's tests: each message the test lets through is
// kept raw and parsed (mailparser). `answer(i)` says what the i-th DATA gets: 'accept', an SMTP
// error code (451, 550), 'destroy' (the connection is cut before any answer) or 'hang' (the
// server takes the data and never answers).

export type SmtpAnswer = 'accept' | 'destroy' | 'hang' | number;

export interface ReceivedMail {
  raw: string;
  parsed: ParsedMail;
  envelope: { from: string; to: string[] };
  // Whether the session had upgraded to TLS (STARTTLS) when the message came.
  secure: boolean;
}

export async function startSmtpServer(answer: (index: number) => SmtpAnswer = () => 'accept', options: { startTls?: boolean } = {}) {
  const received: ReceivedMail[] = [];
  const attempts: string[] = [];
  const sockets = new Set<Socket>();
  let queueId = 0;
  const server = new SMTPServer({
    authOptional: true,
    // STARTTLS offered only when asked (smtp-server's own self-signed certificate).
    disabledCommands: options.startTls ? ['AUTH'] : ['STARTTLS', 'AUTH'],
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
        if (given === 'destroy') {
          // The connection lost before the answer: the client cannot know what happened.
          for (const socket of sockets) socket.destroy();
          return;
        }
        if (typeof given === 'number') {
          const error = Object.assign(new Error(given >= 500 ? 'mailbox unavailable' : 'try again later'), { responseCode: given });
          callback(error);
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
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
