import { TRPCError } from '@trpc/server';
import { expect } from 'chai';

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
