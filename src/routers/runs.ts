import { z } from 'zod';
import { runSchema, runStatusSchema } from '../schemas/sequence';
import { moveRun } from '../services/sequences/run-transitions';
import { router, runnerProcedure } from '../trpc/init';

// Internal: for the sequence runner, over tRPC only (no openapi meta, so not in the REST
// surface or its document), with a runner key.
export const runsRouter = router({
  transition: runnerProcedure
    .input(z.strictObject({ runId: z.string(), status: runStatusSchema }))
    .output(z.object({ run: runSchema }))
    .mutation(async ({ ctx, input }) => ({ run: await moveRun(ctx.db, { ...input, accountId: ctx.accountId }) })),
});
