import { expect } from 'chai';
import { ConflictError } from '../../../src/errors/app-errors';
import { nextRunState, runChangeSql } from '../../../src/services/runs/run-state';

// The run's one state machine (src/services/runs/run-state.ts): what each thing that happens to
// a run makes of it. Every writer of runs asks it; these are its rules, one by one.

const now = new Date('2027-01-04T10:00:00.000Z');
const later = new Date('2027-01-04T12:00:00.000Z');
const earlier = new Date('2027-01-04T09:00:00.000Z');

describe("the run's state machine", () => {
  it('a step that begins makes a pending run running; a wait is due at its end, a send waits for its outcome (nothing due)', () => {
    expect(nextRunState({ status: 'pending' }, { kind: 'began', until: later }, now)).to.deep.equal({
      from: 'pending',
      to: 'running',
      set: { status: 'running', attempt: 1, stepStartedAt: now, dueAt: later },
      keepClaim: false,
    });
    const send = nextRunState({ status: 'running', stepStartedAt: earlier }, { kind: 'began', until: null }, now);
    expect(send.set).to.deep.equal({ attempt: 1, stepStartedAt: earlier, dueAt: null });
  });

  it('a step that succeeds moves the run to its next step, due now, on a new visit; after the last one it completes', () => {
    expect(nextRunState({ status: 'running' }, { kind: 'succeeded', next: 'b' }, now).set).to.deep.equal({
      currentStepId: 'b', visit: 'next', attempt: 0, stepStartedAt: null, dueAt: now, completedAt: null, reason: null,
    });
    const done = nextRunState({ status: 'running', currentStepId: 'last' }, { kind: 'succeeded', next: null }, now);
    expect(done.to).to.equal('completed');
    expect(done.set).to.include({ currentStepId: null, dueAt: null, completedAt: now, reason: null });
  });

  it("a paused run whose send is answered moves on and stays paused, due when it is resumed", () => {
    const change = nextRunState({ status: 'paused', pausedFrom: 'running' }, { kind: 'succeeded', next: 'b' }, now);
    expect(change.to).to.equal('paused');
    expect(change.set).to.deep.include({ currentStepId: 'b', visit: 'next', dueAt: null, pausedDueAt: now, pausedFrom: 'running' });
  });

  it('a send that will be retried changes nothing of the run: it waits on at its step', () => {
    const change = nextRunState({ status: 'running' }, { kind: 'retrying' }, now);
    expect(change.set).to.deep.equal({});
    expect(runChangeSql(change, now).set).to.equal('claim_token = NULL, updated_at = ?');
  });

  it('a step that fails for good, an exit rule, an unenroll: ended, nothing due, the step kept, the reason cut to 500 characters', () => {
    const failed = nextRunState({ status: 'running', currentStepId: 'hook' }, { kind: 'failed', reason: 'x'.repeat(600) }, now);
    expect(failed.to).to.equal('failed');
    expect(failed.set).to.not.have.property('currentStepId');
    expect((failed.set.reason as string).length).to.equal(500);
    expect(failed.set).to.include({ dueAt: null, pausedDueAt: null, pausedFrom: null, stepStartedAt: null, completedAt: now });
    const cancelled = nextRunState({ status: 'paused' }, { kind: 'end', status: 'cancelled', reason: 'unenrolled' }, now);
    expect(cancelled).to.include({ from: 'paused', to: 'cancelled', keepClaim: false });
  });

  it('pause keeps the due time apart (now, when an engine holds the run: its step is taken again at resume); resume gives it back', () => {
    expect(nextRunState({ status: 'running', dueAt: later }, { kind: 'pause' }, now).set).to.deep.equal({ status: 'paused', dueAt: null, pausedDueAt: later, pausedFrom: 'running' });
    expect(nextRunState({ status: 'running', dueAt: later, claimed: true }, { kind: 'pause' }, now).set.pausedDueAt).to.equal(now);
    expect(nextRunState({ status: 'paused', currentStepId: 'w', pausedDueAt: later, pausedFrom: 'running' }, { kind: 'resume' }, now).set).to.deep.equal({
      status: 'running', dueAt: later, pausedDueAt: null, pausedFrom: null,
    });
    // Waiting for its send when paused (nothing was due): due now, so the engine finds the send.
    expect(nextRunState({ status: 'paused', currentStepId: 'hook', pausedDueAt: null, pausedFrom: 'running' }, { kind: 'resume' }, now).set.dueAt).to.equal(now);
    expect(nextRunState({ status: 'paused', currentStepId: null, pausedFrom: 'pending' }, { kind: 'resume' }, now)).to.deep.include({ to: 'pending' });
  });

  it('refuses what a status cannot do: 409 invalid_run_transition', () => {
    for (const [status, input] of [
      ['completed', { kind: 'pause' }],
      ['paused', { kind: 'pause' }],
      ['running', { kind: 'resume' }],
      ['pending', { kind: 'transition', to: 'completed' }],
      ['cancelled', { kind: 'transition', to: 'running' }],
    ] as const) {
      expect(() => nextRunState({ status }, input, now), `${status} ${JSON.stringify(input)}`).to.throw(ConflictError).with.property('code', 'invalid_run_transition');
    }
  });

  it("runs.transition between active statuses keeps an engine's claim; any other move voids it", () => {
    expect(nextRunState({ status: 'pending' }, { kind: 'transition', to: 'running' }, now)).to.deep.equal({ from: 'pending', to: 'running', set: { status: 'running' }, keepClaim: true });
    expect(nextRunState({ status: 'running' }, { kind: 'transition', to: 'completed' }, now).keepClaim).to.equal(false);
    // A runner's end keeps the reason the run had, and its step.
    expect(nextRunState({ status: 'running' }, { kind: 'transition', to: 'completed' }, now).set).to.not.have.any.keys('reason', 'currentStepId');
  });

  it('a move starts the new step afresh on a new visit (paused: when resumed); keeping a send, it keeps the visit', () => {
    expect(nextRunState({ status: 'running' }, { kind: 'move', version: 2, stepId: 'b', keep: null }, now).set).to.deep.equal({
      version: 2, currentStepId: 'b', visit: 'next', attempt: 0, stepStartedAt: null, dueAt: now, pausedDueAt: null,
    });
    expect(nextRunState({ status: 'paused' }, { kind: 'move', version: 2, stepId: 'b', keep: null }, now).set).to.include({ dueAt: null, pausedDueAt: now });
    expect(nextRunState({ status: 'running' }, { kind: 'move', version: 2, stepId: 'hook', keep: 'send' }, now).set).to.deep.equal({ version: 2, currentStepId: 'hook', dueAt: now });
    expect(nextRunState({ status: 'paused' }, { kind: 'move', version: 2, stepId: 'hook', keep: 'send' }, now).set).to.deep.equal({ version: 2, currentStepId: 'hook' });
    // The same wait: its visit, its start and its end stay, paused or not.
    expect(nextRunState({ status: 'running' }, { kind: 'move', version: 2, stepId: 'w', keep: 'wait' }, now).set).to.deep.equal({ version: 2, currentStepId: 'w' });
    expect(nextRunState({ status: 'paused' }, { kind: 'move', version: 2, stepId: 'w', keep: 'wait' }, now).set).to.deep.equal({ version: 2, currentStepId: 'w' });
  });

  it('set aside, held for the window, woken: only the due time changes', () => {
    expect(nextRunState({ status: 'running' }, { kind: 'set-aside' }, now).set).to.deep.equal({ dueAt: null });
    expect(nextRunState({ status: 'pending' }, { kind: 'hold', until: later }, now).set).to.deep.equal({ dueAt: later });
    expect(runChangeSql(nextRunState({ status: 'running' }, { kind: 'wake' }, now), now)).to.deep.equal({ set: 'due_at = ?, lease_until = NULL, updated_at = ?', values: [now, now] });
  });
});
