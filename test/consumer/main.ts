import { createServiceClient, type AppRouter } from 'contact-sequence-service/trpc';
import { createRestClient, type components } from 'contact-sequence-service/rest';
import type { inferRouterOutputs } from '@trpc/server';

// Calls the service at BASE_URL with API_KEY over both transports, typed by the published
// declarations only, and prints what it read as one JSON line.
type Contact = components['schemas']['Contact'];
type CreatedOverTrpc = inferRouterOutputs<AppRouter>['contacts']['create'];

const baseUrl = process.env['BASE_URL'] ?? 'http://127.0.0.1:3000';
const apiKey = process.env['API_KEY'] ?? '';

async function main(): Promise<void> {
  const trpc = createServiceClient({ baseUrl, apiKey });
  const created: CreatedOverTrpc = await trpc.contacts.create.mutate({ email: 'consumer@example.com', tags: ['fixture'] });

  const rest = createRestClient({ baseUrl, apiKey });
  const read = await rest.GET('/contacts/{id}', { params: { path: { id: created.contact.id } } });
  if (!read.data) throw new Error(`GET /contacts/{id} answered ${read.response.status}`);
  const contact: Contact = read.data.contact;
  const firstTag: string | undefined = contact.tags[0];

  const missing = await rest.GET('/contacts/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
  process.stdout.write(`${JSON.stringify({ id: contact.id, email: contact.email, firstTag, missing: missing.response.status, error: missing.error?.error })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
