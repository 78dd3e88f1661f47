import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { messageOfBounceAddress } from './bounce-addresses';
import { messageKeyOf } from './parse-report';

// The emails a provider's events name, by what the provider echoes of them: the envelope
// sender (our signed VERP token), the Message-ID (`<message key@domain>`), or the provider's own
// id (written as provider_message_id when the relay answered with it). Two statements for any
// number of events. Never by an account or an address in the body: those prove nothing.

export interface MessageRef {
  returnPath?: string | null;
  messageIdHeader?: string | null;
  providerId?: string | null;
}

export async function findEmailMessages(db: Database, settings: { key: Buffer | null; bounceDomain?: string }, refs: readonly MessageRef[]): Promise<Array<string | null>> {
  const byToken = refs.map((ref) => (settings.key && ref.returnPath ? messageOfBounceAddress({ key: settings.key, bounceDomain: settings.bounceDomain }, ref.returnPath) : null));
  const keys = [...new Set(refs.flatMap((ref) => (ref.messageIdHeader ? [messageKeyOf(ref.messageIdHeader)] : [])).filter((key): key is string => key !== null))];
  const providerIds = [...new Set(refs.flatMap((ref) => (ref.providerId && ref.providerId.length <= 191 ? [ref.providerId] : [])))];
  const byKey = new Map<string, string>();
  const byProviderId = new Map<string, string>();
  if (keys.length > 0) {
    for (const row of await select<{ id: string; message_key: string }>(db, "SELECT id, message_key FROM messages WHERE message_key IN (?) AND channel = 'email'", [keys])) byKey.set(row.message_key, row.id);
  }
  if (providerIds.length > 0) {
    for (const row of await select<{ id: string; provider_message_id: string }>(
      db,
      "SELECT id, provider_message_id FROM messages WHERE channel = 'email' AND provider_message_id IN (?)",
      [providerIds],
    )) byProviderId.set(row.provider_message_id, row.id);
  }
  return refs.map((ref, index) => {
    const key = ref.messageIdHeader ? messageKeyOf(ref.messageIdHeader) : null;
    return byToken[index] ?? (key ? byKey.get(key) : undefined) ?? (ref.providerId ? byProviderId.get(ref.providerId) : undefined) ?? null;
  });
}
