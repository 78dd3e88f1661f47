import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { defaultCodeFor, type ErrorCode } from '../errors/error-codes';
import { AppError, ConflictError, ServiceUnavailableError, ValidationError, type IssueDetail } from '../errors/app-errors';
import { unknownFieldDetails } from '../schemas/unknown-fields';

// The single mapping from what went wrong to what a client sees, for both transports: the
// REST body (rest-api.ts), the tRPC error formatter (init.ts) and the HTTP layer's own
// answers (send-error.ts) all take { status, code, message } from here.

const CODE_FOR_STATUS: Record<number, TRPCError['code']> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

export function toTRPCError(error: AppError): TRPCError {
  return new TRPCError({ code: CODE_FOR_STATUS[error.status] ?? 'INTERNAL_SERVER_ERROR', message: error.message, cause: error });
}

interface ZodLikeIssue {
  path: PropertyKey[];
  message: string;
  code?: string;
  keys?: readonly string[];
}

function zodIssues(cause: unknown): ZodLikeIssue[] | null {
  const issues = (cause as { issues?: unknown })?.issues;
  return (cause as Error)?.name === 'ZodError' && Array.isArray(issues) ? (issues as ZodLikeIssue[]) : null;
}

// Two checks of one schema can fail alike (an email over 254 characters before and after
// lower-casing): a client reads each problem once.
function distinct(details: IssueDetail[]): IssueDetail[] {
  const seen = new Set<string>();
  return details.filter((detail) => {
    const key = JSON.stringify([detail.path, detail.message]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function issueDetails(error: TRPCError): IssueDetail[] | undefined {
  const cause = error.cause;
  if ((cause instanceof ValidationError || cause instanceof ConflictError) && cause.details.length > 0) return distinct(cause.details);
  const issues = error.code === 'BAD_REQUEST' ? zodIssues(error.cause) : null;
  if (!issues) return undefined;
  // An object's unknown keys are one issue: each is reported at its own path.
  const problems = issues.flatMap(unknownFieldDetails);
  return distinct(problems.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })));
}

const FIXED_MESSAGES: Partial<Record<TRPCError['code'], string>> = {
  PARSE_ERROR: 'Malformed JSON body',
  UNSUPPORTED_MEDIA_TYPE: 'Content-Type must be application/json',
  INTERNAL_SERVER_ERROR: 'Internal server error',
};

export interface RestError {
  status: number;
  body: { error: string; code: ErrorCode; details?: IssueDetail[] };
  retryAfterSeconds?: number;
}

const CODE_FOR_TRPC_CODE: Partial<Record<TRPCError['code'], ErrorCode>> = {
  PARSE_ERROR: 'malformed_json',
  BAD_REQUEST: 'validation_failed',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not_found',
  METHOD_NOT_SUPPORTED: 'not_found',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
  PAYLOAD_TOO_LARGE: 'payload_too_large',
  TOO_MANY_REQUESTS: 'rate_limited',
};

function errorCode(error: TRPCError, status: number): ErrorCode {
  if (error.cause instanceof AppError) return error.cause.code;
  return CODE_FOR_TRPC_CODE[error.code] ?? defaultCodeFor(status);
}

// Seconds a client should wait before retrying, when the failure is worth a retry.
export function retryAfterSeconds(error: TRPCError): number | undefined {
  return error.cause instanceof ServiceUnavailableError ? error.cause.retryAfterSeconds : undefined;
}

export function restErrorFor(error: TRPCError): RestError {
  const status = getHTTPStatusCodeFromError(error);
  const retryAfter = retryAfterSeconds(error);
  if (retryAfter !== undefined) {
    return { status: 503, body: { error: error.message, code: 'service_unavailable' }, retryAfterSeconds: retryAfter };
  }
  if (status >= 500) return { status: 500, body: { error: 'Internal server error', code: 'internal_error' } };
  const code = errorCode(error, status);
  const details = issueDetails(error);
  // zod's issues: the message is the first of them. A service's error keeps its own message.
  if (details && !(error.cause instanceof AppError)) {
    const [first] = details;
    return { status, body: { error: first.path ? `${first.path}: ${first.message}` : first.message, code, details } };
  }
  return {
    status,
    body: { error: FIXED_MESSAGES[error.code] ?? error.message, code, ...(details && { details }) },
  };
}
