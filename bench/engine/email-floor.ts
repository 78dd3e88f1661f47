import nodemailer from 'nodemailer';
import type { SmtpSink } from './smtp-sink';

// The email case's floor: a bare nodemailer pool, configured as the engine's (the same
// connections and messages per connection), sending the same messages already rendered, as
// fast as the pool takes them. What the engine adds on top (claiming, rendering, the message
// rows, recording) is the difference.

export interface FloorMessage {
  from: string;
  to: string;
  subject: string;
  html: string;
  text: string;
  messageId: string;
  headers: Record<string, string>;
}

export async function measureFloor(sink: SmtpSink, messages: readonly FloorMessage[], pool: { maxConnections: number; maxMessages: number }) {
  const transport = nodemailer.createTransport({ url: sink.url, pool: true, ...pool, ignoreTLS: true });
  try {
    await sink.reset();
    const started = performance.now();
    // All handed to the pool at once: it queues them and keeps maxConnections busy.
    await Promise.all(messages.map((message) => transport.sendMail(message)));
    const seconds = (performance.now() - started) / 1000;
    const stats = await sink.stats();
    return { messages: messages.length, seconds, perSecond: messages.length / seconds, received: stats.messages };
  } finally {
    transport.close();
  }
}
