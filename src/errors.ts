// The service's one error vocabulary. Services throw these; the transports map them once
// (src/trpc/errors.ts) to a status and an { error } body.

export interface IssueDetail {
  path: string;
  message: string;
}

export abstract class AppError extends Error {
  abstract readonly status: number;
}

export class ValidationError extends AppError {
  readonly status = 400;
  constructor(
    message: string,
    readonly details: IssueDetail[] = [],
  ) {
    super(message);
  }
}

// Authenticated, but this key may not do this (an integration key on an internal procedure).
export class ForbiddenError extends AppError {
  readonly status = 403;
}

export class NotFoundError extends AppError {
  readonly status = 404;
  constructor(resource: string) {
    super(`${resource} not found`);
  }
}

export class ConflictError extends AppError {
  readonly status = 409;
}

// A backing service is down (the database, the shared rate-limit store): worth a retry.
export class ServiceUnavailableError extends AppError {
  readonly status = 503;
  readonly retryAfterSeconds = 5;
}
