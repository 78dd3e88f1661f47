import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseSecretsKey, SECRETS_KEY_BYTES, SECRETS_KEY_FORMAT } from './secrets-key';

// The embedded default's key: made on the first start into the data folder, beside the
// database it protects, readable by the service's user only (0600), and read at every start
// after. The server and a worker may start together: the file appears whole or not at all
// (written under a temporary name, then linked into place, which fails if another process won).

export const KEY_FILE_NAME = 'secrets.key';

export interface KeyFileResult {
  key: Buffer;
  file: string;
  created: boolean;
}

export function loadOrCreateKeyFile(dataDir: string): KeyFileResult {
  const file = path.resolve(dataDir, KEY_FILE_NAME);
  const existing = readKeyFile(file);
  if (existing) return { key: existing, file, created: false };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const key = randomBytes(SECRETS_KEY_BYTES);
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(temporary, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another process made it first: use theirs.
    return { key: readKeyFile(file)!, file, created: false };
  } finally {
    fs.rmSync(temporary, { force: true });
  }
  return { key, file, created: true };
}

function readKeyFile(file: string): Buffer | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const key = parseSecretsKey(text);
  if (!key) throw new Error(`${file}: the secrets key file ${SECRETS_KEY_FORMAT}; restore it, or set SECRETS_KEY`);
  return key;
}
