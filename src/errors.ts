import type { ErrorCode } from './error-codes';

// The service's one error vocabulary. Services throw these; the transports map them once
// (src/trpc/errors.ts) to a status and an { error } body.

export interface IssueDetail {
  path: string;
  message: string;
}

export abstract class AppError extends Error {
  abstract readonly status: number;
  abstract readonly code: ErrorCode;
}

export class ValidationError extends AppError {
  readonly status = 400;
  readonly code = 'validation_failed';
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
  readonly code = 'forbidden';
}

export class NotFoundError extends AppError {
  readonly status = 404;
  readonly code = 'not_found';
  constructor(resource: string) {
    super(`${resource} not found`);
  }
}

export class ConflictError extends AppError {
  readonly status = 409;
  constructor(
    message: string,
    readonly code: Extract<ErrorCode, 'contact_exists' | 'sequence_not_active' | 'idempotency_in_progress' | 'invalid_run_transition' | 'user_exists'>,
  ) {
    super(message);
  }
}

// An Idempotency-Key sent again with a different request.
export class UnprocessableError extends AppError {
  readonly status = 422;
  readonly code = 'idempotency_key_reused';
}

// A backing service is down (the database, the shared rate-limit store): worth a retry.
export class ServiceUnavailableError extends AppError {
  readonly status = 503;
  readonly code = 'service_unavailable';
  readonly retryAfterSeconds = 5;
}
