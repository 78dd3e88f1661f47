import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type SendMailOptions } from 'nodemailer';

// The embedded default (docs/channels.md "Capture mode"): with no SMTP server configured (the
// account's nor SMTP_URL), each email is built exactly as it would be sent (headers, DKIM
// signature, parts) and written as an .eml file under the data folder's outbox/, one file per
// message key: a retry writes the same file again, never a second one.

const builder = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

export async function captureEmail(outboxDir: string, messageKey: string, mail: SendMailOptions): Promise<string> {
  const info = await builder.sendMail(mail);
  const file = path.join(outboxDir, `${messageKey}.eml`);
  await mkdir(outboxDir, { recursive: true });
  // Whole or not at all: a reader never sees half a message.
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, info.message as Buffer);
  await rename(partial, file);
  return file;
}
