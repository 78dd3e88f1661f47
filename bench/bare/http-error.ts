// An answer the bare server gives instead of a result: status and the { error } body.
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: Array<{ path: string; message: string }>,
  ) {
    super(message);
  }
}
