import { expect } from 'chai';
import { select } from '../../../src/db/sql/statements';
import { recordActivities } from '../../../src/services/activities/record-activities';
import { pruneActivities } from '../../../src/services/activities/prune-activities';
import { activityRetentionTask, DEFAULT_ACTIVITY_RETENTION } from '../../../src/services/maintenance/activity-retention-task';
import { silentLogger } from '../../support/app';
import { testDb } from '../../support/db';
import { buildContact, buildTenant } from '../../support/factories';
import { manualTimers } from '../../support/manual-timers';

// ACTIVITY_RETENTION_DAYS: activities that occurred longer ago go, in bounded chunks, and
// nothing newer; the clock is moved, never waited for.

const DAY = 24 * 60 * 60 * 1000;

async function storedIds(): Promise<string[]> {
  return (await select<{ id: string }>(testDb(), 'SELECT id FROM activities ORDER BY id', [])).map((row) => row.id);
}

// Activities that occurred `daysAgo` before `at`, recorded with the intake's clock at `at`.
async function recordedAt(at: number, daysAgo: number[]) {
  const { accountId } = await buildTenant();
  const contact = await buildContact(accountId);
  await recordActivities(
    testDb(),
    {
      accountId,
      batch: true,
      activities: daysAgo.map((days, i) => ({ contact: { id: contact.id }, name: 'seen', id: `d${days}-${i}`, occurredAt: new Date(at - days * DAY).toISOString() })),
    },
    { retentionDays: 90, now: () => new Date(at) },
  );
}

describe('activity retention', () => {
  it('deletes the activities that occurred before the retention, in chunks, and keeps the newer', async () => {
    const start = Date.now();
    await recordedAt(start, [1, 10, 30, 60, 80, 85, 89]);
    // 30 days later, activities over 90 days old are those of more than 60 days ago (60 itself is on the line, kept).
    const later = new Date(start + 30 * DAY);
    const first = await pruneActivities(testDb(), { before: new Date(later.getTime() - 90 * DAY), rowsPerChunk: 2, maxChunks: 1 });
    expect(first).to.deep.equal({ deleted: 2, more: true });
    const rest = await pruneActivities(testDb(), { before: new Date(later.getTime() - 90 * DAY), rowsPerChunk: 2, maxChunks: 10 });
    expect(rest).to.deep.equal({ deleted: 1, more: false });
    expect(await storedIds()).to.deep.equal(['d1-0', 'd10-1', 'd30-2', 'd60-3']);
  });

  it('runs as a maintenance task on the clock it is given, again at once while a backlog is left', async () => {
    const start = Date.now();
    await recordedAt(start, [1, 50, 60, 70]);
    const clock = manualTimers(start);
    const task = activityRetentionTask(testDb(), { ...DEFAULT_ACTIVITY_RETENTION, retentionDays: 90, rowsPerChunk: 1, maxChunks: 2 }, { logger: silentLogger, timers: clock.timers });
    expect(await task.runOnce()).to.equal(false);
    expect(await storedIds()).to.have.length(4);
    clock.advance(45 * DAY);
    // 50, 60 and 70 days old are now 95, 105 and 115: two chunks of one, and one left.
    expect(await task.runOnce()).to.equal(true);
    expect(await task.runOnce()).to.equal(false);
    expect(await storedIds()).to.deep.equal(['d1-0']);
  });
});
