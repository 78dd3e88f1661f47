// An answer the bare server gives instead of a result: status, the body's stable code and
// message, and a 400's details (the service's `{ error, code, details?, requestId }`).
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: Array<{ path: string; message: string }>,
    readonly code: string = status === 404 ? 'not_found' : 'validation_failed',
  ) {
    super(message);
  }
}
