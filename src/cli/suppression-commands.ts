import fs from 'node:fs';
import { z } from 'zod';
import type { Database } from '../db/database';
import { ValidationError } from '../errors/app-errors';
import { MESSAGE_CHANNELS } from '../schemas/message';
import { MAX_SUPPRESSIONS_PER_REQUEST, SUPPRESSION_REASONS } from '../schemas/suppression';
import { addSuppressionList, deleteSuppression, getSuppression, listSuppressions, type SuppressionItem } from '../services/suppressions/suppression-operations';
import type { CliSettings } from './cli-settings';

// The admin command line's suppression commands: the REST calls of docs/channels.md
// "Suppressions", by account. What they add has the source `cli`.

const uuid = z.uuid('must be a UUID');
const channel = z.enum(MESSAGE_CHANNELS);
const address = z.string().min(1, 'must not be empty').max(320, 'must be at most 320 characters');

type Run<S extends z.ZodType> = (db: Database, flags: z.infer<S>, settings: CliSettings) => Promise<unknown>;
function suppressionCommand<S extends z.ZodType>(definition: { usage: string; flags: S; run: Run<S> }) {
  return definition;
}

// --file: one address a line (blank lines and lines starting with # left out), as many as one
// POST takes.
function addressesIn(file: string): string[] {
  let content: string;
  try {
    content = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ValidationError(`--file: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const lines = content.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
  if (lines.length === 0) throw new ValidationError(`--file: ${file} holds no address`);
  if (lines.length > MAX_SUPPRESSIONS_PER_REQUEST) throw new ValidationError(`--file: ${file} holds ${lines.length} addresses; at most ${MAX_SUPPRESSIONS_PER_REQUEST} at a time`);
  return lines;
}

export const SUPPRESSION_COMMANDS = {
  'suppression:add': suppressionCommand({
    usage: `--account ID --channel ${MESSAGE_CHANNELS.join('|')} (--address ADDRESS | --file FILE) [--reason ${SUPPRESSION_REASONS.join('|')}]   (FILE: one address a line)`,
    flags: z.object({ account: uuid, channel, address: address.optional(), file: z.string().optional(), reason: z.enum(SUPPRESSION_REASONS).optional() }),
    run: async (db, f) => {
      if ((f.address === undefined) === (f.file === undefined)) throw new ValidationError('give --address or --file (one of them)');
      const addresses = f.address !== undefined ? [f.address] : addressesIn(f.file!);
      const items: SuppressionItem[] = addresses.map((value) => ({ channel: f.channel, address: value, reason: f.reason }));
      try {
        return { summary: await addSuppressionList(db, { accountId: f.account, suppressions: items, source: 'cli' }) };
      } catch (error) {
        if (!(error instanceof ValidationError) || error.details.length === 0) throw error;
        // suppressions.N.address, in the words of the flag or the file's line.
        const index = Number(error.details[0]!.path.split('.')[1]);
        const where = f.address !== undefined ? '--address' : `--file: "${addresses[index]}"`;
        throw new ValidationError(`${where}: ${error.details[0]!.message}`, error.details);
      }
    },
  }),
  'suppression:list': suppressionCommand({
    usage: `--account ID [--channel ${MESSAGE_CHANNELS.join('|')}] [--reason R] [--address ADDRESS] [--limit 1-200] [--cursor C]   (newest first)`,
    flags: z.object({
      account: uuid,
      channel: channel.optional(),
      reason: z.enum(SUPPRESSION_REASONS).optional(),
      address: address.optional(),
      limit: z.string().regex(/^\d{1,3}$/, 'must be 1-200').transform(Number).pipe(z.number().min(1, 'must be 1-200').max(200, 'must be 1-200')).optional(),
      cursor: z.string().max(512).optional(),
    }),
    run: async (db, f) => {
      const page = await listSuppressions(db, { accountId: f.account, channel: f.channel, reason: f.reason, address: f.address, limit: f.limit ?? 50, cursor: f.cursor });
      return { suppressions: page.items, nextCursor: page.nextCursor };
    },
  }),
  'suppression:get': suppressionCommand({
    usage: `--account ID --channel ${MESSAGE_CHANNELS.join('|')} --address ADDRESS`,
    flags: z.object({ account: uuid, channel, address }),
    run: (db, f) => getSuppression(db, { accountId: f.account, channel: f.channel, address: f.address }),
  }),
  'suppression:remove': suppressionCommand({
    usage: `--account ID --channel ${MESSAGE_CHANNELS.join('|')} --address ADDRESS   (the next message to it is sent)`,
    flags: z.object({ account: uuid, channel, address }),
    run: async (db, f) => ({ removed: await deleteSuppression(db, { accountId: f.account, channel: f.channel, address: f.address }) }),
  }),
} as const;
