import { z } from 'zod';
import { AUTHENTICATION_MESSAGES, AuthenticationError } from '../../errors/app-errors';
import { text } from '../../schemas/text';
import { MIN_PASSWORD_LENGTH } from '../../services/dashboard/passwords';
import { completeSetupAndSignIn, signIn, signOut } from '../../services/dashboard/sessions';
import { setupLinkEmail } from '../../services/dashboard/users';
import { dashboardPublicProcedure, sessionProcedure } from '../../trpc/dashboard-procedures';
import { router } from '../../trpc/init';

// One message for every failed sign-in: it must not tell an unknown email from a wrong password.
export const SIGN_IN_FAILED = AUTHENTICATION_MESSAGES.sign_in_failed;

// scrypt's cost grows with the input: a bound keeps one request cheap.
const MAX_PASSWORD_LENGTH = 256;
const password = text().max(MAX_PASSWORD_LENGTH, `must be at most ${MAX_PASSWORD_LENGTH} characters`);

export const dashboardAuthRouter = router({
  // Who is signed in, or null: the app's first call decides between sign-in and the pages.
  me: dashboardPublicProcedure.query(({ ctx }) => {
    const user = ctx.dashboard.user;
    return user ? { email: user.email, accountId: user.accountId } : null;
  }),

  signIn: dashboardPublicProcedure
    .input(z.object({ email: text().trim().min(1, 'Enter your email').max(254), password: password.min(1, 'Enter your password') }))
    .mutation(async ({ ctx, input }) => {
      const session = await signIn(ctx.db, input);
      if (!session) throw new AuthenticationError('sign_in_failed');
      ctx.dashboard.startSession(session);
      return { email: session.user.email };
    }),

  signOut: sessionProcedure.mutation(async ({ ctx }) => {
    await signOut(ctx.db, { sessionId: ctx.user.sessionId });
    ctx.dashboard.endSession();
    return { signedOut: true };
  }),

  // The setup link's page, before the password is chosen: whose it is, and the rules it must meet.
  setupInfo: dashboardPublicProcedure
    .input(z.object({ token: z.string().max(128) }))
    .query(async ({ ctx, input }) => ({
      ...(await setupLinkEmail(ctx.db, input)),
      minPasswordLength: MIN_PASSWORD_LENGTH,
      maxPasswordLength: MAX_PASSWORD_LENGTH,
    })),

  // The setup link's page: spends the one-time token, sets the password, and signs its person
  // in (the session cookie, as signIn sets it).
  setup: dashboardPublicProcedure
    .input(
      z.object({
        token: z.string().max(128),
        password: password.min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const session = await completeSetupAndSignIn(ctx.db, input);
      ctx.dashboard.startSession(session);
      return { email: session.user.email };
    }),
});
