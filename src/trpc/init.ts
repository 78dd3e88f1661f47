import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { AppError, AuthenticationError, ForbiddenError } from '../errors/app-errors';
import type { Context } from './context';
import { issueDetails, restErrorFor, toTRPCError } from './errors';
import { decodeOrKeep } from '../url-decode';

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

// Every procedure's first step, two jobs in one (each step of tRPC's chain copies the call's
// options again):
// - Services throw AppErrors; here they become TRPCErrors with the matching code, once.
// - The REST adapter's input, mended (docs/architecture.md, "Dependencies and patches"): path parameters arrive still percent-encoded
//   (`a%2Bb%40x.io`), and a DELETE's JSON body is not read at all. Path parameters win over
//   body fields of the same name.
const mapErrorsAndRestInput = t.middleware(async ({ ctx, meta, getRawInput, next }) => {
  const mended = restInput(ctx, meta, getRawInput);
  const result = await (mended ? next(mended) : next());
  if (!result.ok && result.error.cause instanceof AppError) throw toTRPCError(result.error.cause);
  return result;
});

function restInput(ctx: Context, meta: ApiMeta | undefined, getRawInput: () => Promise<unknown>) {
  const path = meta?.openapi?.path;
  if (ctx.transport !== 'rest' || !path) return undefined;
  const names = pathParameters(path);
  const body = ctx.restDeleteBody;
  return {
    getRawInput: async () => {
      const raw = (await getRawInput()) as Record<string, unknown>;
      const input: Record<string, unknown> = isPlainObject(body) ? { ...body } : { ...raw };
      for (const name of names) {
        if (typeof raw[name] === 'string') input[name] = decodeOrKeep(raw[name] as string);
      }
      return input;
    },
  };
}

// A path template's parameter names, read once per template.
const parametersByPath = new Map<string, string[]>();
function pathParameters(path: string): string[] {
  let names = parametersByPath.get(path);
  if (!names) parametersByPath.set(path, (names = Array.from(path.matchAll(/\{(.+?)\}/g), ([, name]) => name)));
  return names;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const publicProcedure = t.procedure.use(mapErrorsAndRestInput);

// Authentication runs before input validation: 401 precedes 400 and 404.
export const accountProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const auth = await ctx.authenticate();
  if (!auth.ok) throw new AuthenticationError(auth.code);
  return next({ ctx: { accountId: auth.key.accountId, keyId: auth.key.keyId, keyKind: auth.key.kind } });
});

// Internal procedures, for the sequence runner: integration keys (shop plugins, CRM syncs) get
// 403. Checked after authentication (401 first) and before input validation, so an
// integration key learns nothing about the procedure's input from its errors.
export const runnerProcedure = accountProcedure.use(async ({ ctx, next }) => {
  if (ctx.keyKind !== 'runner') throw new ForbiddenError('This API key may not call this procedure');
  return next();
});
