import { expect } from 'chai';
import type { Express } from 'express';
import { select } from '../../src/db/sql/statements';
import type { StepInput } from '../../src/schemas/sequence-definition';
import { enrollByIds } from '../../src/services/sequences/enroll-by-ids';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { buildUser, dashboardApp, mutate, query, signInCookie } from '../support/dashboard';

// The builder's procedures over HTTP, as the dashboard calls them: update (steps, rules,
// window, moveRuns) with the API's rules and 400 details, and the version history; within the
// signed-in account only.

function get(app: Express, path: string, input: unknown, cookie?: string) {
  return query(app, `${path}?input=${encodeURIComponent(JSON.stringify(input))}`, cookie);
}

const STEPS: StepInput[] = [
  { id: 'first-wait', type: 'wait', duration: 'P1D' },
  { id: 'hello', type: 'email', subject: 'Hello {{ contact.firstName }}', html: '<p>Hi</p>' },
  { id: 'done', type: 'exit' },
];

describe('dashboard builder procedures', () => {
  let app: Express;
  let cookie: string;
  let accountId: string;

  beforeEach(async () => {
    app = dashboardApp();
    const user = await buildUser();
    accountId = user.accountId;
    cookie = await signInCookie(app, user.email);
  });

  async function storedVersion(id: string): Promise<number | null> {
    const [row] = await select<{ version: number | null }>(testDb(), 'SELECT version FROM sequences WHERE id = ?', [id]);
    return row.version === null ? null : Number(row.version);
  }

  it('creates a sequence with steps, as the example of the empty list does', async () => {
    const res = await mutate(app, 'dashboard.sequences.create', { name: 'Welcome', steps: STEPS, exitWhen: [{ tag: 'purchased' }] }, cookie);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const sequence = res.body.result.data.sequence;
    expect(sequence.status).to.equal('draft');
    expect(sequence.version).to.equal(1);
    expect(sequence.steps.map((s: { id: string }) => s.id)).to.deep.equal(['first-wait', 'hello', 'done']);
  });

  it('refuses a bad step with the API\'s details at the field, and stores nothing', async () => {
    const sequence = await createSequence(testDb(), { accountId, name: 'S', steps: STEPS });
    const bad = STEPS.map((step) => (step.id === 'hello' ? { ...step, subject: 'Hello {{ contact.firstName ' } : step));
    const res = await mutate(app, 'dashboard.sequences.update', { id: sequence.id, steps: [...bad, { id: 'x', type: 'wait', duration: 'PT1H' }] }, cookie);
    expect(res.status).to.equal(400);
    const paths = res.body.error.data.details.map((d: { path: string }) => d.path);
    expect(paths).to.include('steps.1.subject');
    expect(await storedVersion(sequence.id)).to.equal(1);

    const branch = await mutate(app, 'dashboard.sequences.update', { id: sequence.id, steps: [...STEPS, { id: 'b', type: 'branch', if: { tag: 'vip' }, then: 'ghost', else: 'done' }] }, cookie);
    expect(branch.status).to.equal(400);
    expect(branch.body.error.data.details).to.deep.equal([{ path: 'steps.3.then', message: 'Step "b": "ghost" is not a step of this sequence' }]);
    expect(await storedVersion(sequence.id)).to.equal(1);
  });

  it('makes a new version, moves the active runs by the step map, and lists the versions with their steps', async () => {
    const sequence = await createSequence(testDb(), { accountId, name: 'S', status: 'active', steps: STEPS });
    const contacts = [await buildContact(accountId), await buildContact(accountId)];
    await enrollByIds(testDb(), { accountId, sequenceId: sequence.id, contactIds: contacts.map((c) => c.id) });
    const v2 = [{ id: 'short-wait', type: 'wait', duration: 'PT2H' }, ...STEPS.slice(1)];
    const res = await mutate(app, 'dashboard.sequences.update', { id: sequence.id, steps: v2, moveRuns: { stepMap: { 'first-wait': 'short-wait' } } }, cookie);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.result.data.moved).to.deep.equal([{ fromVersion: 1, runs: 2 }]);
    const runs = await select<{ version: number; current_step_id: string }>(testDb(), 'SELECT version, current_step_id FROM sequence_runs WHERE sequence_id = ?', [sequence.id]);
    expect(runs.map((r) => [Number(r.version), r.current_step_id])).to.deep.equal([[2, 'short-wait'], [2, 'short-wait']]);

    const versions = await get(app, 'dashboard.sequences.versions', { id: sequence.id }, cookie);
    expect(versions.status).to.equal(200);
    const listed = versions.body.result.data.versions;
    expect(listed.map((v: { version: number }) => v.version)).to.deep.equal([2, 1]);
    expect(listed[0].steps[0]).to.deep.equal({ id: 'short-wait', type: 'wait', duration: 'PT2H' });
    expect(listed[1].steps[0]).to.deep.equal({ id: 'first-wait', type: 'wait', duration: 'P1D' });
  });

  it('keeps runs on their version without moveRuns; saves exit rules and the window apart', async () => {
    const sequence = await createSequence(testDb(), { accountId, name: 'S', status: 'active', steps: STEPS });
    await enrollByIds(testDb(), { accountId, sequenceId: sequence.id, contactIds: [(await buildContact(accountId)).id] });
    const res = await mutate(app, 'dashboard.sequences.update', { id: sequence.id, steps: STEPS.slice(1) }, cookie);
    expect(res.body.result.data.sequence.version).to.equal(2);
    const [run] = await select<{ version: number }>(testDb(), 'SELECT version FROM sequence_runs WHERE sequence_id = ?', [sequence.id]);
    expect(Number(run.version)).to.equal(1);

    const rules = await mutate(app, 'dashboard.sequences.update', { id: sequence.id, exitWhen: [{ unsubscribed: 'email' }], sendingWindow: { timeZone: 'Europe/Paris', from: '09:00', to: '17:00' } }, cookie);
    expect(rules.status).to.equal(200);
    expect(rules.body.result.data.sequence.exitWhen).to.deep.equal([{ unsubscribed: 'email' }]);
    expect(rules.body.result.data.sequence.version).to.equal(2);
    const zone = await mutate(app, 'dashboard.sequences.update', { id: sequence.id, sendingWindow: { timeZone: 'Mars/Olympus' } }, cookie);
    expect(zone.status).to.equal(400);
    expect(zone.body.error.data.details[0].path).to.equal('sendingWindow.timeZone');
  });

  it('answers 404 for another account\'s sequence, and changes nothing of it', async () => {
    const other = await buildTenant();
    const theirs = await createSequence(testDb(), { accountId: other.accountId, name: 'Theirs', steps: STEPS });
    const update = await mutate(app, 'dashboard.sequences.update', { id: theirs.id, steps: STEPS.slice(1) }, cookie);
    expect(update.status).to.equal(404);
    expect((await get(app, 'dashboard.sequences.versions', { id: theirs.id }, cookie)).status).to.equal(404);
    expect((await get(app, 'dashboard.sequences.versions', { id: 'not-a-uuid' }, cookie)).status).to.equal(404);
    expect(await storedVersion(theirs.id)).to.equal(1);
  });
});
