import type { Logger } from '../logging/logger';
import type { AuthResult } from '../services/api-keys';
import type { IdempotencyScope } from '../services/idempotency/key-in-transaction';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    // Set by the access log: every line carries the request id.
    log: Logger;
    // Set by resolveApiKey on keyed routes.
    auth?: AuthResult;
    // Why the request was refused, when it was: read by the access log and the metrics.
    rateLimitedBy?: string;
    // The Idempotency-Key this request claimed (src/http/idempotency.ts), for the operation.
    idempotency?: IdempotencyScope;
    unavailableCause?: string;
  }
}

export {};
