// Sending the file itself: a text/csv body to the dashboard's upload route (the API's own
// streaming upload behind the session; src/http/dashboard-import-routes.ts), so a 50 MB file
// goes as it is, never as one JSON string. The answer and the errors have the tRPC shape of
// the other dashboard calls.

export interface UploadOptions {
  mapping: Record<string, string | null>;
  tags: string[];
  sequenceId?: string;
  optedIn: boolean;
  fileName: string;
}

export class UploadError extends Error {
  constructor(
    message: string,
    readonly details: Record<string, string>,
  ) {
    super(message);
  }
}

export async function uploadFile(file: File, options: UploadOptions): Promise<{ id: string }> {
  const query = new URLSearchParams({ mapping: JSON.stringify(options.mapping), fileName: options.fileName });
  if (options.tags.length > 0) query.set('tags', options.tags.join(','));
  if (options.sequenceId) query.set('sequenceId', options.sequenceId);
  if (options.optedIn) query.set('optedIn', 'true');
  let response: Response;
  try {
    response = await fetch(`/trpc/dashboard.contacts.imports.upload?${query}`, { method: 'POST', headers: { 'Content-Type': 'text/csv' }, body: file });
  } catch {
    throw new UploadError('The file could not be sent. Check the connection and try again.', {});
  }
  const body = (await response.json().catch(() => null)) as
    | { result?: { data: { import: { id: string } } }; error?: { message: string; data?: { details?: Array<{ path: string; message: string }> | null } } }
    | null;
  if (response.ok && body?.result) return body.result.data.import;
  const details = Object.fromEntries((body?.error?.data?.details ?? []).map((d) => [d.path, d.message]));
  throw new UploadError(body?.error?.message ?? `The service answered ${response.status}`, details);
}
