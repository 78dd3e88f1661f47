import { createHmac } from 'node:crypto';

// Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the base64
// after `whsec_`. Several signatures (during a rotation) are separated by spaces. Written here
// rather than taken from the standardwebhooks package, which stays the independent verifier
// the tests check against (and a devDependency).
export function signatureFor(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

export function signatureHeader(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets.map((secret) => signatureFor(secret, id, timestampSeconds, body)).join(' ');
}
