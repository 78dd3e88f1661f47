import fs from 'node:fs';
import { z } from 'zod';
import type { Database } from '../db/database';
import { ValidationError } from '../errors/app-errors';
import { definitionInputSchema } from '../schemas/sequence';
import { API_KEY_KINDS } from '../schemas/statuses';
import { SEQUENCE_STATUSES } from '../schemas/statuses';
import { isEmailAddress, text } from '../schemas/text';
import { unknownFieldDetails } from '../schemas/unknown-fields';
import { createAccount, listAccounts, setMaxActiveRuns } from '../services/accounts';
import { createApiKey, listApiKeys, setApiKeyActive } from '../services/api-keys';
import { createUser, disableUser, issueSetupLink, listUsers, setupUrl } from '../services/dashboard/users';
import { deleteSequence } from '../services/sequences/delete-sequence';
import { createSequence, listSequences, setSequenceStatus } from '../services/sequences/sequence-admin';
import type { CliSettings } from './cli-settings';
import { CHANNEL_COMMANDS } from './channel-commands';
import { WEBHOOK_COMMANDS } from './webhook-commands';
import { SUPPRESSION_COMMANDS } from './suppression-commands';
import { IMPORT_COMMANDS } from './import-commands';

// The admin command line's commands (docs/decisions.md "Accounts, keys and sequences"): each one a
// schema for its flags and a call to a service.

const uuid = z.uuid('must be a UUID');
const name = text().trim().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
const limit = z.string().regex(/^\d{1,9}$/, 'must be a whole number').transform(Number);

// --steps FILE: JSON holding the steps array alone, or { steps, exitWhen, sendingWindow, entry, goal } as
// POST /api/v1/sequences takes them. Its shape is checked here, before the database is opened;
// a problem is named by its path in the definition, as the API's 400 names it.
const definitionFile = z.string().transform((file, ctx) => {
  const refuse = (message: string) => {
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  let content: string;
  try {
    content = fs.readFileSync(file, 'utf8');
  } catch (error) {
    return refuse(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch (error) {
    return refuse(`${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof json !== 'object' || json === null) return refuse(`${file} must hold the steps array or an object { steps, exitWhen, sendingWindow, entry, goal }`);
  const parsed = z.strictObject(definitionInputSchema.shape).safeParse(Array.isArray(json) ? { steps: json } : json);
  if (!parsed.success) {
    // As the API's 400 puts it: an unknown field at its own path.
    const [issue] = parsed.error.issues.flatMap(unknownFieldDetails);
    const at = issue!.path.map(String).join('.');
    return refuse(`${file}: ${at ? `${at}: ` : ''}${issue!.message}`);
  }
  return { file, definition: parsed.data };
});

// The service checks what reads across fields (step ids, cycles, durations, zones, endpoints);
// its refusal names the file and the field, as the API's 400 does in its details.
async function withDefinitionFile<T>(file: string | undefined, create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (error) {
    if (file === undefined || !(error instanceof ValidationError) || error.details.length === 0) throw error;
    const [first] = error.details;
    throw new ValidationError(`${file}: ${first!.path}: ${first!.message}`, error.details);
  }
}


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
  'account:list': command({
    usage: '',
    flags: z.object({}),
    run: (db) => listAccounts(db),
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
    usage: `--account ID --name NAME [--status ${SEQUENCE_STATUSES.join('|')}] [--steps FILE]   (FILE: JSON, the steps array or { steps, exitWhen, sendingWindow, entry, goal })`,
    flags: z.object({ account: uuid, name, status: z.enum(SEQUENCE_STATUSES).optional(), steps: definitionFile.optional() }),
    run: (db, f, settings) =>
      withDefinitionFile(f.steps?.file, () =>
        createSequence(db, { accountId: f.account, name: f.name, status: f.status, ...f.steps?.definition, channels: settings.channels() }),
      ),
  }),
  'sequence:set-status': command({
    usage: `--id ID --status ${SEQUENCE_STATUSES.join('|')}`,
    flags: z.object({ id: uuid, status: z.enum(SEQUENCE_STATUSES) }),
    run: (db, f, settings) => setSequenceStatus(db, { id: f.id, status: f.status, channels: settings.channels() }),
  }),
  'sequence:list': command({
    usage: `--account ID [--status ${SEQUENCE_STATUSES.join('|')}]   (archived ones only with --status archived)`,
    flags: z.object({ account: uuid, status: z.enum(SEQUENCE_STATUSES).optional() }),
    run: (db, f) => listSequences(db, { accountId: f.account, status: f.status }),
  }),
  'sequence:delete': command({
    usage: '--id ID   (only a sequence that never had a run; archive the others)',
    flags: z.object({ id: uuid }),
    run: async (db, f) => ({ deleted: (await deleteSequence(db, { id: f.id })).id }),
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
    usage: '[--account ID]',
    flags: z.object({ account: uuid.optional() }),
    run: (db, f) => listUsers(db, { accountId: f.account }),
  }),
  'user:setup-link': command({
    usage: '--id ID',
    flags: z.object({ id: uuid }),
    run: async (db, f, settings) => {
      const { user, setupToken } = await issueSetupLink(db, { id: f.id });
      return { id: user.id, email: user.email, setupUrl: setupUrl(settings.publicBaseUrl, setupToken) };
    },
  }),
  'user:disable': command({
    usage: '--id ID',
    flags: z.object({ id: uuid }),
    run: (db, f) => disableUser(db, { id: f.id }),
  }),
  ...WEBHOOK_COMMANDS,
  ...CHANNEL_COMMANDS,
  ...SUPPRESSION_COMMANDS,
  ...IMPORT_COMMANDS,
} as const;

export type CommandName = keyof typeof COMMANDS;
