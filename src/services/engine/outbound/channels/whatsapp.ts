import type { Channel } from './channel';
import { loadMessageTargets } from './message-targets';

// PLACEHOLDER until the WhatsApp channel (h/whatsapp) replaces this file: a whatsapp step's send
// fails its step at once, with its message `failed`, rather than wait for a channel that is not
// registered (its lease would run out, again and again).
export function whatsappChannel(): Channel {
  return {
    name: 'whatsapp',
    async load(db, sends) {
      const targets = await loadMessageTargets(db, sends);
      return async (send) => {
        const target = targets.get(send.idempotencyId);
        return { ok: false, reason: 'no whatsapp channel', detail: {}, final: true, abandoned: false, message: target ? { id: target.messageId } : undefined };
      };
    },
  };
}
