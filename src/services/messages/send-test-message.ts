import type { Database } from '../../db/database';
import type { ChannelSettings } from '../channels/channel-settings';
import { previewMessage } from './preview-message';
import { sendTestEmail } from './send-test-email';
import { sendTestWhatsApp } from './send-test-whatsapp';
import type { TestSendDeps, TestSendInput, TestSendResult } from './test-sends';

// "Send a test" for an email or a WhatsApp step (test-sends.ts): rendered (and checked: another
// account's sequence or contact is a 404, a template that does not parse a 400) before anything
// is counted or written, then sent by the step's channel.
export async function sendTestMessage(db: Database, input: TestSendInput, settings: ChannelSettings, deps: TestSendDeps): Promise<TestSendResult> {
  const preview = await previewMessage(db, input, settings);
  return preview.channel === 'email' ? sendTestEmail(db, input, preview, settings, deps) : sendTestWhatsApp(db, input, preview, settings, deps);
}
