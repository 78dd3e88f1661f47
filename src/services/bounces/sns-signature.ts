import { createVerify, X509Certificate } from 'node:crypto';
import { LruMap } from '../lru-map';
import { boundedGet } from './bounded-get';

// Amazon SNS's message signatures (docs/channels.md "Provider webhooks (SES, SendGrid)";
// https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html): the
// message's fields in a fixed order, `Name\nvalue\n` each, signed with RSA, SHA1 for
// SignatureVersion 1 and SHA256 for 2, by the certificate at SigningCertURL. That URL must be
// https on an `sns.<region>.amazonaws.com` host, or the message is refused before anything is
// fetched: anyone can sign with a certificate of their own.

export interface SnsMessage {
  Type: string;
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: string;
  Signature: string;
  SigningCertURL: string;
  Subject?: string;
  SubscribeURL?: string;
  Token?: string;
}

const NOTIFICATION_FIELDS = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] as const;
const SUBSCRIPTION_FIELDS = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'] as const;
// A region's name (us-east-1, eu-west-2, us-gov-west-1), not any label: `sns.s3.amazonaws.com`
// would be an S3 bucket named sns, which anyone could have made.
const SNS_HOST = /^sns\.[a-z]{2}(-[a-z]+)+-\d{1,2}\.amazonaws\.com$/;

// The SNS host check, for SigningCertURL and SubscribeURL alike.
export function isSnsUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 2048) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && SNS_HOST.test(url.hostname) && url.port === '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

export function isSigningCertUrl(value: unknown): value is string {
  return isSnsUrl(value) && new URL(value).pathname.endsWith('.pem');
}

// The message's shape, or null: every field a signature covers must be a string.
export function snsMessageOf(payload: unknown): SnsMessage | null {
  if (!payload || typeof payload !== 'object') return null;
  const message = payload as Record<string, unknown>;
  const required = ['Type', 'MessageId', 'TopicArn', 'Message', 'Timestamp', 'SignatureVersion', 'Signature', 'SigningCertURL'];
  if (!required.every((name) => typeof message[name] === 'string')) return null;
  for (const name of ['Subject', 'SubscribeURL', 'Token']) if (message[name] !== undefined && typeof message[name] !== 'string') return null;
  return message as unknown as SnsMessage;
}

export function snsStringToSign(message: SnsMessage): string {
  const fields = message.Type === 'Notification' ? NOTIFICATION_FIELDS : SUBSCRIPTION_FIELDS;
  let text = '';
  for (const name of fields) {
    const value = message[name];
    if (value === undefined) continue;
    text += `${name}\n${value}\n`;
  }
  return text;
}

export type CertificateFetcher = (url: string) => Promise<string>;

// The signing certificates, fetched once each (SNS uses one for months), at most 5 s and 16 KiB.
export class SnsCertificates {
  private readonly cache = new LruMap<string, Promise<X509Certificate>>(16);

  constructor(private readonly fetcher: CertificateFetcher = fetchCertificate) {}

  get(url: string): Promise<X509Certificate> {
    let certificate = this.cache.get(url);
    if (!certificate) {
      certificate = this.fetcher(url).then((pem) => new X509Certificate(pem));
      // A failed fetch is not kept: the next message tries again.
      certificate.catch(() => this.cache.set(url, undefined as never));
      this.cache.set(url, certificate);
    }
    return certificate;
  }
}

async function fetchCertificate(url: string): Promise<string> {
  const { status, body } = await boundedGet(url, { timeoutMs: 5_000, maxBytes: 16 * 1024 });
  if (status !== 200) throw new Error(`the signing certificate answered ${status}`);
  return body;
}

// Whether the message is signed by the certificate its SigningCertURL names (which must be an
// SNS host's). A certificate that cannot be fetched is a failure too: the caller answers 5xx, so
// that SNS sends the message again.
export async function verifySnsMessage(message: SnsMessage, certificates: SnsCertificates): Promise<'valid' | 'invalid'> {
  if (!isSigningCertUrl(message.SigningCertURL)) return 'invalid';
  const algorithm = message.SignatureVersion === '1' ? 'RSA-SHA1' : message.SignatureVersion === '2' ? 'RSA-SHA256' : null;
  if (!algorithm) return 'invalid';
  const certificate = await certificates.get(message.SigningCertURL);
  try {
    const verifier = createVerify(algorithm);
    verifier.update(snsStringToSign(message), 'utf8');
    return verifier.verify(certificate.publicKey, message.Signature, 'base64') ? 'valid' : 'invalid';
  } catch {
    return 'invalid';
  }
}
