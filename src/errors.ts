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

export class AuthenticationError extends AppError {
  readonly status = 401;
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
