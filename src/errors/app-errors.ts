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

// Who is calling is not established: no key, a bad or disabled key, no dashboard session. The
// code says which (clients branch on it), so nothing reads it back out of the message.
export type AuthenticationCode = Extract<
  ErrorCode,
  'missing_api_key' | 'invalid_api_key' | 'api_key_inactive' | 'api_key_expired' | 'sign_in_required' | 'sign_in_failed'
>;

export const AUTHENTICATION_MESSAGES: Readonly<Record<AuthenticationCode, string>> = {
  missing_api_key: 'Missing x-api-key header',
  invalid_api_key: 'Invalid API key',
  api_key_inactive: 'API key is inactive',
  api_key_expired: 'API key has expired',
  sign_in_required: 'Sign in to continue',
  // The same for an unknown email and a wrong password.
  sign_in_failed: 'Email or password is incorrect',
};

export class AuthenticationError extends AppError {
  readonly status = 401;
  constructor(readonly code: AuthenticationCode) {
    super(AUTHENTICATION_MESSAGES[code]);
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
    readonly code: Extract<
      ErrorCode,
      | 'contact_exists'
      | 'sequence_not_active'
      | 'sequence_has_runs'
      | 'idempotency_in_progress'
      | 'invalid_run_transition'
      | 'user_exists'
      | 'webhook_in_use'
      | 'public_base_url_required'
      | 'domain_in_use'
      | 'activity_conflict'
      | 'sender_required'
    >,
    // What is in the way, one entry each (webhook_in_use: the sequences' steps).
    readonly details: IssueDetail[] = [],
  ) {
    super(message);
  }
}

// A secret (an SMTP password, a DKIM key, a WhatsApp token) cannot be stored: the server has
// no SECRETS_KEY (docs/channels.md "Secrets at rest"). Retrying does not help; the operator
// sets the key. Nothing was written.
export const SECRETS_KEY_MISSING = 'This server cannot store secrets: SECRETS_KEY is not set (ask its operator)';
export class SecretsKeyMissingError extends AppError {
  readonly status = 409;
  readonly code = 'secrets_key_missing';
  constructor() {
    super(SECRETS_KEY_MISSING);
  }
}

// An account's relay that is not on loopback, saved while the server's PUBLIC_BASE_URL is not an
// https:// URL: its emails' unsubscribe links could not be right. The operator sets it.
export const PUBLIC_BASE_URL_REQUIRED =
  'This server cannot send through a relay that is not on this machine: its PUBLIC_BASE_URL is not an https:// URL, so unsubscribe links would point at a local address (ask its operator)';
// PUT /channels/email's 409s, as the OpenAPI document declares them.
export const EMAIL_SENDER_CONFLICTS = `${SECRETS_KEY_MISSING} (secrets_key_missing); or a relay not on this machine while PUBLIC_BASE_URL is not https (public_base_url_required)`;
export const DOMAIN_IN_USE = "The domain is the account's bounceDomain";
// POST /sequences and PATCH /sequences/{id} (sender_required): after the step's name, what an
// active sequence's email step without a From, in an account and a server without a sender, lacks.
export const SENDER_REQUIRED =
  'has no sender: give the step a From, or set the account\'s sender (PUT /channels/email with "from", or Settings -> Channels), or the server\'s EMAIL_FROM';
// As the OpenAPI document declares it.
export const SENDER_REQUIRED_EXAMPLE = `Step "welcome" ${SENDER_REQUIRED}`;
// POST /activities (and /batch): the id names a stored activity with another name or properties.
export const ACTIVITY_CONFLICT = 'An activity with this id was stored with a different name or properties';

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

// Too many of something in a window (the message editor's test sends): try again later.
export class RateLimitedError extends AppError {
  readonly status = 429;
  readonly code = 'rate_limited';
}

// A server refused a message the caller asked to send now (a test send's SMTP answer): the
// request was fine, the relay said no; its answer is in the message.
export class SendRefusedError extends AppError {
  readonly status = 409;
  readonly code = 'send_refused';
}
