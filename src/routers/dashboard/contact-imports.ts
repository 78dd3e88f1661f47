import { z } from 'zod';
import { ValidationError } from '../../errors/app-errors';
import { importIdParam, importOptionsSchema } from '../../schemas/contact-import';
import { cancelImport, createImport, getImport, listContactImports, listImportErrors } from '../../services/imports/import-operations';
import { PREVIEW_BYTES, previewCsv } from '../../services/imports/import-preview';
import { importsDir } from '../../services/imports/imports-dir';
import { sessionProcedure } from '../../trpc/dashboard-procedures';
import { router } from '../../trpc/init';
import type { Context } from '../../trpc/context';

const dirOf = (ctx: Context) => ctx.imports?.dir ?? importsDir(undefined);

// Contacts -> Import: the API's import services within the signed-in account. The file itself
// comes as a text/csv body through src/http/dashboard-import-routes.ts (the same streaming to the
// imports folder as the API's upload), which calls `create` with the file in ctx.upload.
export const dashboardContactImportsRouter = router({
  // The file's first bytes read by the import's own parser, with the API's default fields: what
  // the page shows before anything is sent.
  preview: sessionProcedure
    .input(z.strictObject({
      text: z.string().max(PREVIEW_BYTES * 4, 'The preview takes the file\'s first 64 KiB'),
      complete: z.boolean().describe('The text is the whole file.'),
    }))
    .mutation(({ input }) => ({ preview: previewCsv(input) })),

  create: sessionProcedure.input(importOptionsSchema).mutation(async ({ ctx, input }) => {
    if (!ctx.upload) {
      const message = 'Choose a CSV file to import';
      throw new ValidationError(`file: ${message}`, [{ path: 'file', message }]);
    }
    return { import: await createImport(ctx.db, { ...input, accountId: ctx.accountId, dir: dirOf(ctx), source: { file: ctx.upload.file } }) };
  }),

  list: sessionProcedure.query(async ({ ctx }) => ({ imports: await listContactImports(ctx.db, { accountId: ctx.accountId, limit: 10 }) })),

  get: sessionProcedure.input(importIdParam).query(async ({ ctx, input }) => ({ import: await getImport(ctx.db, { ...input, accountId: ctx.accountId }) })),

  errors: sessionProcedure
    .input(importIdParam.extend({ after: z.number().int().min(0).optional(), limit: z.number().int().min(1).max(1000).optional() }))
    .query(async ({ ctx, input }) => {
      const page = await listImportErrors(ctx.db, { ...input, accountId: ctx.accountId });
      return { errors: page.errors, nextAfter: page.nextAfter, header: page.import.columns.map((column) => column.header) };
    }),

  cancel: sessionProcedure
    .input(importIdParam)
    .mutation(async ({ ctx, input }) => ({ import: await cancelImport(ctx.db, { ...input, accountId: ctx.accountId, dir: dirOf(ctx) }) })),
});
