import { z } from 'zod';
import type { Database } from '../db/database';
import { API_KEY_KINDS } from '../schemas/statuses';
import { SEQUENCE_STATUSES } from '../schemas/statuses';
import { isEmailAddress, text } from '../schemas/text';
import { createAccount, setMaxActiveRuns } from '../services/accounts';
import { createApiKey, listApiKeys, setApiKeyActive } from '../services/api-keys';
import { createUser, disableUser, listUsers, setupUrl } from '../services/dashboard/users';
import { createSequence, listSequences, setSequenceStatus } from '../services/sequences/sequence-admin';
import type { CliSettings } from './cli-settings';
import { WEBHOOK_COMMANDS } from './webhook-commands';

// The admin command line's commands (docs/decisions.md "Accounts, keys and sequences"): each one a
// schema for its flags and a call to a service.

const uuid = z.uuid('must be a UUID');
const name = text().trim().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
const limit = z.string().regex(/^\d{1,9}$/, 'must be a whole number').transform(Number);


interface Command<S extends z.ZodType> {
  usage: string;
  flags: S;
  run(db: Database, flags: z.infer<S>, settings: CliSettings): Promise<unknown>;
}

function command<S extends z.ZodType>(definition: Command<S>): Command<S> {
  return definition;
}

export const COMMANDS = {
  'account:create': command({
    usage: '--name NAME [--max-active-runs N]',
    flags: z.object({ name, 'max-active-runs': limit.optional() }),
    run: (db, f) => createAccount(db, { name: f.name, maxActiveRuns: f['max-active-runs'] ?? null }),
  }),
  'account:update': command({
    usage: '--id ID --max-active-runs N|none',
    flags: z.object({
      id: uuid,
      'max-active-runs': z.string().regex(/^(\d{1,9}|none)$/, 'must be a whole number or none'),
    }),
    run: (db, f) =>
      setMaxActiveRuns(db, {
        id: f.id,
        maxActiveRuns: f['max-active-runs'] === 'none' ? null : Number(f['max-active-runs']),
      }),
  }),
  'key:create': command({
    usage: `--account ID --name NAME [--kind ${API_KEY_KINDS.join('|')}] [--expires-at ISO8601]`,
    flags: z.object({
      account: uuid,
      name,
      kind: z.enum(API_KEY_KINDS).optional(),
      'expires-at': z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).optional(),
    }),
    run: (db, f) =>
      createApiKey(db, {
        accountId: f.account,
        name: f.name,
        kind: f.kind,
        expiresAt: f['expires-at'] ? new Date(f['expires-at']) : null,
      }),
  }),
  'key:disable': command({
    usage: '--id ID',
    flags: z.object({ id: uuid }),
    run: (db, f) => setApiKeyActive(db, { id: f.id, active: false }),
  }),
  'key:enable': command({
    usage: '--id ID',
    flags: z.object({ id: uuid }),
    run: (db, f) => setApiKeyActive(db, { id: f.id, active: true }),
  }),
  'key:list': command({
    usage: '--account ID',
    flags: z.object({ account: uuid }),
    run: (db, f) => listApiKeys(db, { accountId: f.account }),
  }),
  'sequence:create': command({
    usage: `--account ID --name NAME [--status ${SEQUENCE_STATUSES.join('|')}]`,
    flags: z.object({ account: uuid, name, status: z.enum(SEQUENCE_STATUSES).optional() }),
    run: (db, f) => createSequence(db, { accountId: f.account, name: f.name, status: f.status }),
  }),
  'sequence:set-status': command({
    usage: `--id ID --status ${SEQUENCE_STATUSES.join('|')}`,
    flags: z.object({ id: uuid, status: z.enum(SEQUENCE_STATUSES) }),
    run: (db, f) => setSequenceStatus(db, { id: f.id, status: f.status }),
  }),
  'sequence:list': command({
    usage: '--account ID',
    flags: z.object({ account: uuid }),
    run: (db, f) => listSequences(db, { accountId: f.account }),
  }),
  'user:create': command({
    usage: '--account ID --email EMAIL',
    flags: z.object({ account: uuid, email: text().trim().refine(isEmailAddress, 'must be an email address') }),
    run: async (db, f, settings) => {
      const { user, setupToken } = await createUser(db, { accountId: f.account, email: f.email });
      return { id: user.id, email: user.email, setupUrl: setupUrl(settings.publicBaseUrl, setupToken) };
    },
  }),
  'user:list': command({
    usage: '--account ID',
    flags: z.object({ account: uuid }),
    run: (db, f) => listUsers(db, { accountId: f.account }),
  }),
  'user:disable': command({
    usage: '--id ID',
    flags: z.object({ id: uuid }),
    run: (db, f) => disableUser(db, { id: f.id }),
  }),
  ...WEBHOOK_COMMANDS,
} as const;

export type CommandName = keyof typeof COMMANDS;
