import { toIso, toIsoOrNull } from '../../src/db/sql/rows';
import { select } from '../../src/db/sql/statements';
import { testDb } from './db';

// What the sequence tables hold, read straight from the database: the suites check what is
// stored, not only what the API answers.

export interface StoredRun {
  id: string;
  accountId: string;
  sequenceId: string;
  contactId: string;
  status: string;
  startedAt: string;
  completedAt: string | null;
  createdAt: string;
}

export interface StoredEnrollment {
  id: string;
  accountId: string;
  sequenceId: string;
  status: string;
  totalContacts: number;
  successfulEnrollments: number;
  failedEnrollments: number;
  skippedDuplicates: number;
}

type RunFilter = { accountId?: string; sequenceId?: string; contactId?: string; status?: string };

const RUN_FILTER_COLUMNS: Record<keyof RunFilter, string> = {
  accountId: 'account_id',
  sequenceId: 'sequence_id',
  contactId: 'contact_id',
  status: 'status',
};

// Oldest first (ties by id), the reverse of "latest run".
export async function storedRuns(filter: RunFilter = {}): Promise<StoredRun[]> {
  const entries = Object.entries(filter).filter(([, value]) => value !== undefined) as Array<[keyof RunFilter, string]>;
  const where = entries.length ? `WHERE ${entries.map(([key]) => `${RUN_FILTER_COLUMNS[key]} = ?`).join(' AND ')}` : '';
  const rows = await select<Record<string, unknown>>(
    testDb(),
    `SELECT id, account_id, sequence_id, contact_id, status, started_at, completed_at, created_at
       FROM sequence_runs ${where} ORDER BY created_at, id`,
    entries.map(([, value]) => value),
  );
  return rows.map((row) => ({
    id: row.id as string,
    accountId: row.account_id as string,
    sequenceId: row.sequence_id as string,
    contactId: row.contact_id as string,
    status: row.status as string,
    startedAt: toIso(row.started_at),
    completedAt: toIsoOrNull(row.completed_at),
    createdAt: toIso(row.created_at),
  }));
}

export async function storedEnrollments(filter: { sequenceId?: string } = {}): Promise<StoredEnrollment[]> {
  const rows = await select<Record<string, unknown>>(
    testDb(),
    `SELECT id, account_id, sequence_id, status, total_contacts, successful_enrollments, failed_enrollments,
            skipped_duplicates
       FROM enrollments ${filter.sequenceId ? 'WHERE sequence_id = ?' : ''} ORDER BY created_at, id`,
    filter.sequenceId ? [filter.sequenceId] : [],
  );
  return rows.map((row) => ({
    id: row.id as string,
    accountId: row.account_id as string,
    sequenceId: row.sequence_id as string,
    status: row.status as string,
    totalContacts: Number(row.total_contacts),
    successfulEnrollments: Number(row.successful_enrollments),
    failedEnrollments: Number(row.failed_enrollments),
    skippedDuplicates: Number(row.skipped_duplicates),
  }));
}

export async function countRows(table: 'contacts' | 'sequence_runs' | 'enrollments', accountId?: string): Promise<number> {
  const [{ n }] = await select<{ n: number | string }>(
    testDb(),
    `SELECT COUNT(*) AS n FROM ${table}${accountId ? ' WHERE account_id = ?' : ''}`,
    accountId ? [accountId] : [],
  );
  return Number(n);
}
