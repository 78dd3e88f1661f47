import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import type { Database } from '../db/database';
import { databaseNow } from '../db/sql/clock';
import { ValidationError } from '../errors/app-errors';
import { MAX_IMPORT_BYTES } from '../schemas/contact-import';
import { createImport, getImport, tooLarge } from '../services/imports/import-operations';
import { DEFAULT_IMPORT_RUN, runImports } from '../services/imports/run-import';
import type { CliSettings } from './cli-settings';

// The admin command line's contact import (docs/api.md "Importing contacts"): the file is copied
// to the imports folder, queued as POST /api/v1/contacts/imports queues it, and moved to its end
// by this process, a batch per transaction as the worker does (if this process dies, the service
// or the worker takes it over once its lease ends). Prints the import as it ended.

type Run<S extends z.ZodType> = (db: Database, flags: z.infer<S>, settings: CliSettings) => Promise<unknown>;
function importCommand<S extends z.ZodType>(definition: { usage: string; positional: string; flags: S; run: Run<S> }) {
  return definition;
}

const mapping = z.string().transform((value, ctx) => {
  try {
    return z.record(z.string(), z.string().nullable()).parse(JSON.parse(value));
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON object of header -> field, e.g. {"E-mail":"email"}' });
    return z.NEVER;
  }
});

export const IMPORT_COMMANDS = {
  'contacts:import': importCommand({
    usage: 'FILE --account ID [--mapping JSON] [--tags a,b] [--sequence ID] [--opted-in true]',
    positional: 'file',
    flags: z.object({
      file: z.string().min(1, 'give the CSV file'),
      account: z.uuid('must be a UUID'),
      mapping: mapping.optional(),
      tags: z.string().transform((value) => value.split(',').map((tag) => tag.trim()).filter((tag) => tag !== '')).optional(),
      sequence: z.string().optional(),
      'opted-in': z.enum(['true', 'false']).transform((value) => value === 'true').optional(),
    }),
    run: async (db, f, settings) => {
      let size: number;
      try {
        size = (await fs.promises.stat(f.file)).size;
      } catch (error) {
        throw new ValidationError(`cannot read ${f.file}: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (size > MAX_IMPORT_BYTES) throw tooLarge();
      await fs.promises.mkdir(settings.importsDir, { recursive: true });
      const staged = path.join(settings.importsDir, `upload-${randomUUID()}.part`);
      try {
        await pipeline(fs.createReadStream(f.file), fs.createWriteStream(staged));
        const created = await createImport(db, {
          accountId: f.account,
          dir: settings.importsDir,
          source: { file: staged },
          mapping: f.mapping,
          tags: f.tags,
          sequenceId: f.sequence,
          optedIn: f['opted-in'],
          fileName: path.basename(f.file),
        });
        const run = { ...DEFAULT_IMPORT_RUN, dir: settings.importsDir, owner: `cli:${process.pid}:${randomUUID().slice(0, 8)}`, now: () => databaseNow(db), only: created.id };
        for (;;) {
          const current = await getImport(db, { accountId: f.account, id: created.id });
          if (current.status !== 'queued' && current.status !== 'running') return { import: current };
          // Held by another process (the worker took it first): it moves it; this one reports.
          if (!(await runImports(db, run))) return { import: current };
        }
      } finally {
        await fs.promises.rm(staged, { force: true });
      }
    },
  }),
};
