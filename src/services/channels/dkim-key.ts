import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import nodemailer from 'nodemailer';
import { ValidationError } from '../../errors/app-errors';

// A DKIM key as it is saved: it must sign a message with nodemailer's own signer, the one the
// sender uses. nodemailer does not fail on a key it cannot use: it sends the message unsigned.
// So the check is that a signature came out, not that nothing threw.

const MIN_RSA_BITS = 1024;
const FIELD = 'dkim.privateKey';

function refuse(message: string): never {
  throw new ValidationError(`${FIELD}: ${message}`, [{ path: FIELD, message }]);
}

function readKey(pem: string): KeyObject {
  try {
    return createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    return refuse('is not a PEM private key');
  }
}

// The public half, base64 of its DER SubjectPublicKeyInfo: the p= of the TXT record.
export async function checkDkimKey(input: { domain: string; selector: string; privateKey: string }): Promise<{ publicKey: string }> {
  const key = readKey(input.privateKey);
  if (key.asymmetricKeyType !== 'rsa') refuse('must be an RSA key (nodemailer signs rsa-sha256 only)');
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) refuse(`is ${bits} bits; receivers ignore RSA keys under ${MIN_RSA_BITS} bits (2048 advised)`);
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  const info = await transport.sendMail({
    from: `check@${input.domain}`,
    to: `check@${input.domain}`,
    subject: 'DKIM check',
    text: 'A message signed when the key was saved.',
    dkim: { domainName: input.domain, keySelector: input.selector, privateKey: input.privateKey },
  });
  const signed = (info.message as Buffer).toString('utf8');
  if (!/^DKIM-Signature:/im.test(signed)) refuse('does not sign: nodemailer could not make a signature with it');
  return { publicKey: createPublicKey(key).export({ type: 'spki', format: 'der' }).toString('base64') };
}

export function dkimDnsRecord(domain: string, selector: string, publicKey: string) {
  return { name: `${selector}._domainkey.${domain}`, type: 'TXT' as const, value: `v=DKIM1; k=rsa; p=${publicKey}` };
}
