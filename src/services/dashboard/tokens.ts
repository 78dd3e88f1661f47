import { createHash, randomBytes } from 'node:crypto';

// Setup links and session cookies carry 32 random bytes (base64url); the database keeps only
// their SHA-256, so a copy of the database signs nobody in.

export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;
