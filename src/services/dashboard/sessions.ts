import { Op } from 'sequelize';
import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import { User, UserSession } from '../../models';
import { decoyHash, verifyPassword } from './passwords';
import { generateToken, hashToken, TOKEN_FORMAT } from './tokens';
import { normalizeEmail, setPasswordFromLink } from './users';

// Sign-in sessions, kept server-side: a session ends after 12 h unused or 30 days after sign-in,
// whichever comes first, on sign-out, and when its user is disabled.

export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 30 * 24 * 60 * 60 * 1000;
// Pushing the idle expiry forward is a write: at most once a minute per session.
const SLIDE_GRANULARITY_MS = 60_000;

export interface SignedInUser {
  sessionId: string;
  userId: string;
  accountId: string;
  email: string;
}

export interface NewSession {
  token: string;
  expiresAt: Date;
  user: SignedInUser;
}

// null for any failure (unknown email, wrong password, no password yet, disabled): the caller
// answers them all with one message.
export async function signIn(
  db: Database,
  input: { email: string; password: string },
  now = new Date(),
): Promise<NewSession | null> {
  const user = await User.findOne({ where: { email: normalizeEmail(input.email) } });
  const usable = user && user.active && user.passwordHash !== null;
  const matches = await verifyPassword(input.password, usable ? user.passwordHash! : await decoyHash());
  if (!usable || !matches) return null;
  return openSession(db, user, now);
}

// The setup link's password, then a session as sign-in opens one: whoever sets their password
// is signed in, without typing it again. The setup's refusals are its own (SETUP_LINK_INVALID).
export async function completeSetupAndSignIn(db: Database, input: { token: string; password: string }, now = new Date()): Promise<NewSession> {
  return openSession(db, await setPasswordFromLink(db, input, now), now);
}

async function openSession(db: Database, user: User, now: Date): Promise<NewSession> {
  const token = generateToken();
  const expiresAt = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
  const session = await withTransaction(db, async (transaction) => {
    await User.update({ lastLoginAt: now }, { where: { id: user.id }, transaction });
    return UserSession.create(
      {
        userId: user.id,
        tokenHash: hashToken(token),
        idleExpiresAt: new Date(now.getTime() + SESSION_IDLE_MS),
        expiresAt,
      },
      { transaction },
    );
  });
  return { token, expiresAt, user: { sessionId: session.id, userId: user.id, accountId: user.accountId, email: user.email } };
}

export async function resolveSession(db: Database, token: string | undefined, now = new Date()): Promise<SignedInUser | null> {
  if (!token || !TOKEN_FORMAT.test(token)) return null;
  const session = await UserSession.findOne({
    where: { tokenHash: hashToken(token), idleExpiresAt: { [Op.gt]: now }, expiresAt: { [Op.gt]: now } },
  });
  if (!session) return null;
  const user = await User.findByPk(session.userId);
  if (!user || !user.active) return null;
  const slid = new Date(Math.min(now.getTime() + SESSION_IDLE_MS, session.expiresAt.getTime()));
  if (slid.getTime() - session.idleExpiresAt.getTime() >= SLIDE_GRANULARITY_MS) {
    await withTransaction(db, (transaction) => UserSession.update({ idleExpiresAt: slid }, { where: { id: session.id }, transaction }));
  }
  return { sessionId: session.id, userId: user.id, accountId: user.accountId, email: user.email };
}

export async function signOut(db: Database, input: { sessionId: string }): Promise<void> {
  await withTransaction(db, (transaction) => UserSession.destroy({ where: { id: input.sessionId }, transaction }));
}

