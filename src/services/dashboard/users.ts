import { Op, UniqueConstraintError } from 'sequelize';
import type { Database } from '../../db/database';
import { withTransaction } from '../../db/sql/transaction';
import { ConflictError, NotFoundError, ValidationError } from '../../errors/app-errors';
import { Account, User, UserSession, UserSetupToken } from '../../models';
import { hashPassword } from './passwords';
import { generateToken, hashToken, TOKEN_FORMAT } from './tokens';

// Dashboard users: created by an operator (the admin command line) with a one-time setup link,
// where the person chooses a password.

export const SETUP_LINK_TTL_MS = 24 * 60 * 60 * 1000;
export const SETUP_LINK_INVALID = 'This setup link is invalid, used or expired';

export interface UserSummary {
  id: string;
  accountId: string;
  email: string;
  active: boolean;
  passwordSet: boolean;
  createdAt: string;
  lastLoginAt: string | null;
}

function summarize(user: User): UserSummary {
  return {
    id: user.id,
    accountId: user.accountId,
    email: user.email,
    active: Boolean(user.active),
    passwordSet: Boolean(user.passwordHash),
    createdAt: user.createdAt.toISOString(),
    lastLoginAt: user.lastLoginAt ? user.lastLoginAt.toISOString() : null,
  };
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function setupUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/dashboard/setup?token=${token}`;
}

export async function createUser(
  db: Database,
  input: { accountId: string; email: string },
  now = new Date(),
): Promise<{ user: UserSummary; setupToken: string }> {
  const setupToken = generateToken();
  const user = await withTransaction(db, async (transaction) => {
    const account = await Account.findByPk(input.accountId, { transaction });
    if (!account) throw new NotFoundError('Account');
    let created: User;
    try {
      created = await User.create({ accountId: input.accountId, email: normalizeEmail(input.email), passwordHash: null, active: true }, { transaction });
    } catch (error) {
      if (error instanceof UniqueConstraintError) throw new ConflictError('A user with this email exists', 'user_exists');
      throw error;
    }
    await UserSetupToken.create(
      { userId: created.id, tokenHash: hashToken(setupToken), expiresAt: new Date(now.getTime() + SETUP_LINK_TTL_MS) },
      { transaction },
    );
    return created;
  });
  return { user: summarize(user), setupToken };
}

// One account's users, or every account's when none is given.
export async function listUsers(db: Database, input: { accountId?: string } = {}): Promise<UserSummary[]> {
  const users = await User.findAll({
    where: input.accountId ? { accountId: input.accountId } : {},
    order: [['createdAt', 'ASC'], ['id', 'ASC']],
  });
  return users.map(summarize);
}

// A new one-time link for an existing user, when the first is lost or expired, or the password
// forgotten (the link sets a new one). Links issued before and still unused stop working: only
// the newest one printed can be used.
export async function issueSetupLink(
  db: Database,
  input: { id: string },
  now = new Date(),
): Promise<{ user: UserSummary; setupToken: string }> {
  const setupToken = generateToken();
  const user = await withTransaction(db, async (transaction) => {
    const found = await User.findByPk(input.id, { transaction });
    if (!found) throw new NotFoundError('User');
    if (!found.active) throw new ValidationError('The user is disabled: a setup link would not let them in');
    await UserSetupToken.update({ usedAt: now }, { where: { userId: found.id, usedAt: null }, transaction });
    await UserSetupToken.create(
      { userId: found.id, tokenHash: hashToken(setupToken), expiresAt: new Date(now.getTime() + SETUP_LINK_TTL_MS) },
      { transaction },
    );
    return found;
  });
  return { user: summarize(user), setupToken };
}

// Disabling signs the user out everywhere: their sessions go in the same transaction.
export async function disableUser(db: Database, input: { id: string }): Promise<UserSummary> {
  return withTransaction(db, async (transaction) => {
    const user = await User.findByPk(input.id, { transaction });
    if (!user) throw new NotFoundError('User');
    user.active = false;
    await user.save({ transaction });
    await UserSession.destroy({ where: { userId: user.id }, transaction });
    return summarize(user);
  });
}

// Spends the link and sets the password. The conditional UPDATE is what makes the link
// one-time: of two uses at once, the database lets one change the row.
export async function completeSetup(
  db: Database,
  input: { token: string; password: string },
  now = new Date(),
): Promise<{ email: string }> {
  return { email: (await setPasswordFromLink(db, input, now)).email };
}

// completeSetup's work, answering the user whose password it set (sessions.ts signs them in).
export async function setPasswordFromLink(db: Database, input: { token: string; password: string }, now: Date): Promise<User> {
  if (!TOKEN_FORMAT.test(input.token)) throw new ValidationError(SETUP_LINK_INVALID);
  const passwordHash = await hashPassword(input.password);
  return withTransaction(db, async (transaction) => {
    const [spent] = await UserSetupToken.update(
      { usedAt: now },
      { where: { tokenHash: hashToken(input.token), usedAt: null, expiresAt: { [Op.gt]: now } }, transaction },
    );
    if (spent !== 1) throw new ValidationError(SETUP_LINK_INVALID);
    const token = await UserSetupToken.findOne({ where: { tokenHash: hashToken(input.token) }, transaction });
    const user = token && (await User.findByPk(token.userId, { transaction }));
    if (!user || !user.active) throw new ValidationError(SETUP_LINK_INVALID);
    user.passwordHash = passwordHash;
    await user.save({ transaction });
    return user;
  });
}

// Whose password a setup link sets, for its page to say so before the password is chosen; the
// same refusal as completeSetup for a link that cannot be used.
export async function setupLinkEmail(db: Database, input: { token: string }, now = new Date()): Promise<{ email: string }> {
  if (!TOKEN_FORMAT.test(input.token)) throw new ValidationError(SETUP_LINK_INVALID);
  const token = await UserSetupToken.findOne({ where: { tokenHash: hashToken(input.token), usedAt: null, expiresAt: { [Op.gt]: now } } });
  const user = token && (await User.findByPk(token.userId));
  if (!user || !user.active) throw new ValidationError(SETUP_LINK_INVALID);
  return { email: user.email };
}
