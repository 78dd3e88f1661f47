import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WhatsAppRequest } from './render-message';

// The embedded default for WhatsApp (docs/channels.md "Capture mode"): an account with no
// WhatsApp token (no channel set) gets each message's request body, exactly as it would be
// POSTed to Graph, written as JSON under the data folder's outbox/, one file per message key:
// a retry writes the same file again, never a second one.
export async function captureWhatsApp(outboxDir: string, messageKey: string, request: { url: string; body: WhatsAppRequest }): Promise<string> {
  const file = path.join(outboxDir, `${messageKey}.whatsapp.json`);
  await mkdir(outboxDir, { recursive: true });
  // Whole or not at all: a reader never sees half a request.
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify(request, null, 2)}\n`);
  await rename(partial, file);
  return file;
}
