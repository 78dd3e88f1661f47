import type { AuthResult } from '../services/api-keys';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    // Set by resolveApiKey on keyed routes.
    auth?: AuthResult;
  }
}

export {};
