import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { AppError, AuthenticationError, ForbiddenError } from '../errors/app-errors';
import type { Context } from './context';
import { issueDetails, restErrorFor, toTRPCError } from './errors';

// REST facts that trpc-to-openapi has no place for: the status of a success (it answers 200
// to everything), and a second success status where the outcome decides (upsert: 200 or 201).
export type ApiMeta = OpenApiMeta<{
  successStatus?: 200 | 201 | 202 | 204;
  alternateSuccess?: { status: 200 | 201; description: string };
  // Its 201 creates one resource and says where (Location, set by the procedure): the path
  // template, e.g. '/api/v1/contacts/{id}'.
  location?: string;
}>;

const t = initTRPC
  .context<Context>()
  .meta<ApiMeta>()
  .create({
    // No stack traces and no internal messages on the wire, whatever NODE_ENV says.
    // data.appCode is the REST body's `code`; data.requestId its `requestId`.
    errorFormatter({ shape, error, ctx }) {
      const { body } = restErrorFor(error);
      return {
        code: shape.code,
        message: body.error,
        data: {
          code: shape.data.code,
          appCode: body.code,
          httpStatus: shape.data.httpStatus,
          path: shape.data.path,
          requestId: ctx?.requestId ?? null,
          details: issueDetails(error) ?? null,
        },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

// Services throw AppErrors; here they become TRPCErrors with the matching code, once.
function mapAppError<R extends { ok: boolean }>(result: R): R {
  const cause = result.ok ? undefined : (result as { error?: TRPCError }).error?.cause;
  if (cause instanceof AppError) throw toTRPCError(cause);
  return result;
}

const mapErrors = t.middleware(async ({ next }) => mapAppError(await next()));

export const publicProcedure = t.procedure.use(mapErrors);

// Authentication runs before input validation: 401 precedes 400 and 404. It is one step with
// the error mapping above, not a second middleware after it: every step of tRPC's chain
// copies the call's options again, and a request's CPU shows it.
export const accountProcedure = t.procedure.use(async ({ ctx, next }) => {
  let accountCtx;
  try {
    const auth = await ctx.authenticate();
    if (!auth.ok) throw new AuthenticationError(auth.code);
    accountCtx = { accountId: auth.key.accountId, keyId: auth.key.keyId, keyKind: auth.key.kind };
  } catch (error) {
    // What the error mapping would have made of it as a step of its own.
    const cause = error instanceof TRPCError ? error.cause : error;
    if (cause instanceof AppError) throw toTRPCError(cause);
    throw error;
  }
  return mapAppError(await next({ ctx: accountCtx }));
});

// Internal procedures, for the sequence runner: integration keys (shop plugins, CRM syncs) get
// 403. Checked after authentication (401 first) and before input validation, so an
// integration key learns nothing about the procedure's input from its errors.
export const runnerProcedure = accountProcedure.use(async ({ ctx, next }) => {
  if (ctx.keyKind !== 'runner') throw new ForbiddenError('This API key may not call this procedure');
  return next();
});
