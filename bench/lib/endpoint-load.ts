import type { Endpoint, EndpointContext } from './compare-endpoints';
import type { BenchAccount } from './fixture';
import { runLoad, type LoadResult } from './load';
import type { RunningServer } from './servers';

// One run of an endpoint's requests against one server (npm run bench, bench:profile).
export function measureEndpoint(
  endpoint: Endpoint,
  server: RunningServer,
  apiKey: string,
  size: { amount?: number; seconds?: number },
  connections: number,
): Promise<LoadResult> {
  return runLoad(
    {
      base: server.base,
      apiKey,
      method: endpoint.method,
      // autocannon refuses more connections than requests.
      connections: Math.min(connections, size.amount ?? Infinity),
      ...size,
      expectStatus: endpoint.expectStatus,
      next: () => endpoint.next(server.spec.name),
      checkBody: endpoint.checkBody,
    },
    server.pid,
  );
}

// Enrolls the contacts into each sequence through a server: set-up for unenroll and status,
// not measured.
export async function enrollThrough(base: string, key: string, contactIds: string[], sequenceIds: readonly string[]): Promise<void> {
  const body = JSON.stringify({ contactIds });
  let next = 0;
  const worker = async () => {
    while (next < sequenceIds.length) {
      const id = sequenceIds[next++];
      const response = await fetch(`${base}/api/v1/sequences/${id}/enroll`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body,
      });
      if (response.status !== 201) throw new Error(`enroll (setup) answered ${response.status}: ${await response.text()}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, sequenceIds.length) }, worker));
}

// What the endpoints need to make their requests: the account's seeded contacts (the first 500
// are the ones enrolled) and an active sequence for trigger.
export function endpointContext(account: BenchAccount, tag: string, sequenceId: string, contactIds: string[], emails: string[]): EndpointContext {
  const enrollIds = contactIds.slice(0, 500);
  return {
    tag,
    sequenceId,
    contactIds,
    emails,
    enrollIds,
    newSequences: (count) => account.newSequences(count),
    enrollThrough: (base, sequenceIds) => enrollThrough(base, account.key, enrollIds, sequenceIds),
  };
}
