import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { AppError, ServiceUnavailableError, ValidationError, type IssueDetail } from '../errors';

// The single mapping from what went wrong to what a client sees, for both transports.

const CODE_FOR_STATUS: Record<number, TRPCError['code']> = {
  400: 'BAD_REQUEST',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  503: 'SERVICE_UNAVAILABLE',
};

export function toTRPCError(error: AppError): TRPCError {
  return new TRPCError({ code: CODE_FOR_STATUS[error.status] ?? 'INTERNAL_SERVER_ERROR', message: error.message, cause: error });
}

interface ZodLikeIssue {
  path: PropertyKey[];
  message: string;
}

function zodIssues(cause: unknown): ZodLikeIssue[] | null {
  const issues = (cause as { issues?: unknown })?.issues;
  return (cause as Error)?.name === 'ZodError' && Array.isArray(issues) ? (issues as ZodLikeIssue[]) : null;
}

export function issueDetails(error: TRPCError): IssueDetail[] | undefined {
  if (error.cause instanceof ValidationError && error.cause.details.length > 0) return error.cause.details;
  const issues = error.code === 'BAD_REQUEST' ? zodIssues(error.cause) : null;
  return issues?.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
}

const FIXED_MESSAGES: Partial<Record<TRPCError['code'], string>> = {
  PARSE_ERROR: 'Malformed JSON body',
  UNSUPPORTED_MEDIA_TYPE: 'Content-Type must be application/json',
  INTERNAL_SERVER_ERROR: 'Internal server error',
};

export interface RestError {
  status: number;
  body: { error: string; details?: IssueDetail[] };
  retryAfterSeconds?: number;
}

// Seconds a client should wait before retrying, when the failure is worth a retry.
export function retryAfterSeconds(error: TRPCError): number | undefined {
  return error.cause instanceof ServiceUnavailableError ? error.cause.retryAfterSeconds : undefined;
}

export function restErrorFor(error: TRPCError): RestError {
  const status = getHTTPStatusCodeFromError(error);
  const retryAfter = retryAfterSeconds(error);
  if (retryAfter !== undefined) return { status: 503, body: { error: error.message }, retryAfterSeconds: retryAfter };
  if (status >= 500) return { status: 500, body: { error: 'Internal server error' } };
  const details = issueDetails(error);
  if (details && !(error.cause instanceof ValidationError)) {
    const [first] = details;
    return { status, body: { error: first.path ? `${first.path}: ${first.message}` : first.message, details } };
  }
  return {
    status,
    body: { error: FIXED_MESSAGES[error.code] ?? error.message, ...(details && { details }) },
  };
}

export function publicMessage(error: TRPCError): string {
  return restErrorFor(error).body.error;
}
