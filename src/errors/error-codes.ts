// The stable, machine-readable `code` of every error body (docs/errors.md), by status.
// Clients branch on these; the `error` message is for people and may be reworded.
export const ERROR_CODES_BY_STATUS = {
  400: ['validation_failed', 'malformed_json'],
  401: ['missing_api_key', 'invalid_api_key', 'api_key_inactive', 'api_key_expired'],
  403: ['forbidden'],
  404: ['not_found'],
  405: ['method_not_allowed'],
  409: ['contact_exists', 'sequence_not_active', 'sequence_has_runs', 'idempotency_in_progress', 'invalid_run_transition', 'webhook_in_use', 'secrets_key_missing', 'public_base_url_required', 'domain_in_use', 'activity_conflict', 'sender_required'],
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
  422: ['idempotency_key_reused'],
  429: ['rate_limited'],
  500: ['internal_error'],
  503: ['service_unavailable'],
} as const;

// Codes only the dashboard's own procedures answer; they are not part of the public API.
export const DASHBOARD_ERROR_CODES = ['sign_in_required', 'sign_in_failed', 'api_key_not_accepted', 'user_exists', 'send_refused'] as const;

// Codes of the receivers the service offers to providers outside /api/v1 (the WhatsApp status
// webhook, docs/messages.md): a 401 for a body whose signature does not match.
export const RECEIVER_ERROR_CODES = ['invalid_signature'] as const;

type CodesByStatus = typeof ERROR_CODES_BY_STATUS;
export type ErrorCode = CodesByStatus[keyof CodesByStatus][number] | (typeof DASHBOARD_ERROR_CODES)[number] | (typeof RECEIVER_ERROR_CODES)[number];

// The code a status carries when nothing more precise is known (the first of its list).
export function defaultCodeFor(status: number): ErrorCode {
  const codes = (ERROR_CODES_BY_STATUS as Record<number, readonly ErrorCode[]>)[status];
  if (codes) return codes[0];
  return status >= 500 ? 'internal_error' : 'validation_failed';
}
