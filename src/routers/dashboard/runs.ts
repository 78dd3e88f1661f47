import { z } from 'zod';
import { getRunPage } from '../../services/sequences/run-page';
import { pauseRun, resumeRun } from '../../services/sequences/run-transitions';
import { unenroll } from '../../services/sequences/unenroll';
import { sessionProcedure } from '../../trpc/dashboard-procedures';
import { router } from '../../trpc/init';

// A run's page and the timeline on a contact's page: the API's timeline with what the page needs
// to read it (run-page.ts), and the API's pause, resume and cancel (unenroll: a contact has one
// active run per sequence, so cancelling this run is unenrolling its contact), always within
// the signed-in account.

const runParam = z.object({ id: z.string().max(64) });
const runAction = z.object({ id: z.string().max(64), sequenceId: z.string().max(64) });

export const dashboardRunsRouter = router({
  get: sessionProcedure.input(runParam).query(({ ctx, input }) => getRunPage(ctx.db, { accountId: ctx.accountId, runId: input.id })),

  pause: sessionProcedure
    .input(runAction)
    .mutation(async ({ ctx, input }) => ({ run: await pauseRun(ctx.db, { accountId: ctx.accountId, sequenceId: input.sequenceId, runId: input.id }) })),

  resume: sessionProcedure
    .input(runAction)
    .mutation(async ({ ctx, input }) => ({ run: await resumeRun(ctx.db, { accountId: ctx.accountId, sequenceId: input.sequenceId, runId: input.id }) })),

  cancel: sessionProcedure
    .input(runAction.extend({ contactId: z.string().max(64) }))
    .mutation(({ ctx, input }) => unenroll(ctx.db, { accountId: ctx.accountId, sequenceId: input.sequenceId, contactIds: [input.contactId] })),
});
