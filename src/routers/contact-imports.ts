import { z } from 'zod';
import { ValidationError } from '../errors/app-errors';
import { contactImportSchema, importErrorSchema, importIdParam, importOptionsSchema } from '../schemas/contact-import';
import { cancelImport, createImport, getImport, listContactImports, listImportErrors } from '../services/imports/import-operations';
import { importsDir } from '../services/imports/imports-dir';
import { accountProcedure, router } from '../trpc/init';
import type { Context } from '../trpc/context';

const TAGS = ['Contacts'];
const importLocation = (id: string) => `/api/v1/contacts/imports/${id}`;
const importResponse = z.object({ import: contactImportSchema });
const dirOf = (ctx: Context) => ctx.imports?.dir ?? importsDir(undefined);

// Contact imports (docs/api.md "Importing contacts"). A text/csv upload reaches `create` through
// src/http/import-upload.ts, which streams the body to the imports folder and passes the file in
// the context (ctx.upload): a client can never name a file of the server's. A JSON body (REST or
// tRPC) carries the CSV itself in `csv`, up to the 1 MiB body limit.
// Declared in the contacts router before /contacts/{id}, whose GET would take /contacts/imports.
export const contactImportsRouter = router({
  create: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/contacts/imports',
        tags: TAGS,
        summary: 'Import contacts from a CSV file',
        description:
          'Send the file as the body with `Content-Type: text/csv` (RFC 4180, UTF-8 with or without BOM, comma or ' +
          'semicolon; up to 50 MB and 1,000,000 rows) and the options in the query (`mapping` as a JSON object, ' +
          '`tags` comma-separated, `sequenceId`, `optedIn=true`, `fileName`); or a JSON body with the CSV in `csv` ' +
          '(up to 1 MiB) beside the options. The file is checked at once (a header with an email column, the ' +
          'mapping, the row count): a bad file is a 400 naming the problem and nothing is kept. The rows are then ' +
          'upserted in the background, 500 per transaction, with the upsert\'s merge rules: follow `GET ' +
          '/contacts/imports/{id}`. Rejected rows are listed at `/contacts/imports/{id}/errors`.',
        protect: true,
        errorResponses: { 404: 'Sequence not found', 409: 'Sequence is not active' },
      },
      successStatus: 202,
    })
    .input(importOptionsSchema.extend({ csv: z.string().optional().describe('The CSV file\'s text, for a JSON body.').meta({ example: 'email,firstName\nada@example.com,Ada\n' }) }))
    .output(importResponse)
    .mutation(async ({ ctx, input }) => {
      const { csv, ...options } = input;
      if (ctx.upload && csv !== undefined) throw new ValidationError('csv: give the file as the body or in csv, not both', [{ path: 'csv', message: 'Give the file as the body or in csv, not both' }]);
      if (!ctx.upload && csv === undefined) {
        const message = 'Send the CSV file as the body (Content-Type: text/csv), or its text in csv';
        throw new ValidationError(`file: ${message}`, [{ path: 'file', message }]);
      }
      const source = ctx.upload ? { file: ctx.upload.file } : { csv: csv! };
      const created = await createImport(ctx.db, { ...options, accountId: ctx.accountId, dir: dirOf(ctx), source });
      ctx.http.headers.Location = importLocation(created.id);
      return { import: created };
    }),

  list: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts/imports',
        tags: TAGS,
        summary: 'List recent contact imports',
        description: 'The account\'s 20 latest imports, newest first, with their progress.',
        protect: true,
      },
    })
    .input(z.strictObject({}))
    .output(z.object({ imports: z.array(contactImportSchema) }))
    .query(async ({ ctx }) => ({ imports: await listContactImports(ctx.db, { accountId: ctx.accountId }) })),

  get: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts/imports/{id}',
        tags: TAGS,
        summary: 'Follow a contact import',
        description:
          '`status`: queued, running, completed, failed (`error` says why; the rows committed before stay) or ' +
          'cancelled. `processed` counts the rows handled so far out of `rows`: `inserted` + `updated` + `failed`.',
        protect: true,
        errorResponses: { 404: 'Import not found' },
      },
    })
    .input(importIdParam)
    .output(importResponse)
    .query(async ({ ctx, input }) => ({ import: await getImport(ctx.db, { ...input, accountId: ctx.accountId }) })),

  errors: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts/imports/{id}/errors',
        tags: TAGS,
        summary: 'The rows an import rejected, as CSV',
        description:
          'A CSV file (UTF-8, comma, CRLF): `row` (the data row, 1 for the first after the header, blank lines not ' +
          'counted), `reason`, then the file\'s own columns with the row\'s cells, so it can be corrected and ' +
          'imported again. Cells a spreadsheet would run as a formula are prefixed with a quote.',
        protect: true,
        errorResponses: { 404: 'Import not found' },
      },
    })
    .input(importIdParam.extend({
      after: z.coerce.number().int().min(0).optional().describe('The last row of the page before.'),
      limit: z.coerce.number().int().min(1).max(1000).optional().describe('Rows per page, at most 1000 (the default).'),
    }))
    .output(z.object({
      errors: z.array(importErrorSchema),
      nextAfter: z.number().int().nullable().describe('Pass as `after` for the next page; null on the last.').meta({ example: null }),
      header: z.array(z.string()).describe('The file\'s columns.').meta({ example: ['E-mail', 'First name'] }),
    }))
    .query(async ({ ctx, input }) => {
      const page = await listImportErrors(ctx.db, { ...input, accountId: ctx.accountId });
      return { errors: page.errors, nextAfter: page.nextAfter, header: page.import.columns.map((column) => column.header) };
    }),

  cancel: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/contacts/imports/{id}/cancel',
        tags: TAGS,
        summary: 'Cancel a contact import',
        description:
          'A queued or running import stops after the batch under way; the rows committed before stay. ' +
          'An import that has ended is answered as it is.',
        protect: true,
        errorResponses: { 404: 'Import not found' },
      },
    })
    .input(importIdParam)
    .output(importResponse)
    .mutation(async ({ ctx, input }) => ({ import: await cancelImport(ctx.db, { ...input, accountId: ctx.accountId, dir: dirOf(ctx) }) })),
});
