import { TRPCError } from '@trpc/server';
import { expect } from 'chai';
import { AppError } from '../../src/errors/app-errors';
import { issueDetails } from '../../src/trpc/errors';

// The TRPCError a createCaller call was rejected with; fails the test if it was not rejected.
export async function trpcRejection(promise: Promise<unknown>): Promise<TRPCError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(TRPCError);
    return error as TRPCError;
  }
  return expect.fail('expected the call to be rejected');
}

// A BAD_REQUEST whose first issue names `path` (what REST's 400 puts first in `details`).
export async function badRequest(promise: Promise<unknown>, path: string): Promise<TRPCError> {
  const error = await trpcRejection(promise);
  expect(error.code, error.message).to.equal('BAD_REQUEST');
  const details = issueDetails(error);
  expect(details, error.message).to.be.an('array').that.is.not.empty;
  for (const detail of details ?? []) expect(detail.message).to.be.a('string').that.is.not.empty;
  expect(details?.[0].path, error.message).to.equal(path);
  return error;
}

// A rejection with `trpcCode`, carrying the AppError whose message and stable code REST puts in
// its `{ error, code }` body.
export async function rejectedWith(
  promise: Promise<unknown>,
  trpcCode: TRPCError['code'],
  expected: { error: string; code: string },
): Promise<TRPCError> {
  const error = await trpcRejection(promise);
  expect(error.code, error.message).to.equal(trpcCode);
  expect(error.message).to.equal(expected.error);
  expect(error.cause).to.be.instanceOf(AppError);
  expect((error.cause as AppError).code).to.equal(expected.code);
  return error;
}
