import { expect } from 'chai';
import { execute, select } from '../../../src/db/sql/statements';
import { toDate } from '../../../src/db/sql/rows';
import { testDb } from '../../support/db';
import { engineAt, enrolledRun } from './support';

// Email and WhatsApp steps are defined, saved and previewed, but this version of the service
// does not send them: a run that reaches one fails with a reason that says so, and nothing is
// sent or passed over silently. Like every step that acts, they wait for the sending window and
// exit rules are checked before them.

const EMAIL = { id: 'mail', type: 'email', subject: 'Hi {{ contact.firstName }}', html: '<p>Hi</p>' };
const WHATSAPP = { id: 'chat', type: 'whatsapp', template: { name: 'welcome', language: { code: 'en' } } };

describe('sequence engine: email and whatsapp steps before the sender', () => {
  for (const step of [EMAIL, WHATSAPP]) {
    it(`fails a run that reaches its ${step.type} step, saying that it is not sent, and does not go past it`, async () => {
      const run = await enrolledRun([step, { id: 'after', type: 'tag', add: ['after'] }]);
      const { engine } = engineAt();
      await engine.runUntilIdle();
      const detail = await run.timeline();
      expect(detail).to.include({ status: 'failed', currentStepId: step.id, reason: `cannot plan: ${step.type} steps are not sent by this version of the service` });
      const [contact] = await select<{ tags: unknown }>(testDb(), 'SELECT tags FROM contacts WHERE id = ?', [run.contact.id]);
      expect(String(contact!.tags)).to.not.contain('after');
    });
  }

  it('holds them outside the sending window, as it holds every step that acts', async () => {
    const start = Date.parse('2027-03-27T20:00:00.000Z');
    const run = await enrolledRun([EMAIL], { sendingWindow: { timeZone: 'UTC', from: '09:00', to: '17:00' } });
    const { engine } = engineAt(start);
    await engine.runOnce();
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'pending', waitingFor: 'window', currentStepId: 'mail' });
    const stored = await select<{ due_at: unknown }>(testDb(), 'SELECT due_at FROM sequence_runs WHERE id = ?', [run.runId]);
    expect(toDate(stored[0]!.due_at).toISOString()).to.equal('2027-03-28T09:00:00.000Z');
  });

  it('checks exit rules before them: a contact that meets one is cancelled at the step, not failed', async () => {
    const run = await enrolledRun([WHATSAPP], { exitWhen: [{ tag: 'bought' }] });
    // Written behind the API's back, so that no writer's own check sees it: only the engine's
    // check before the step can.
    await execute(testDb(), 'UPDATE contacts SET tags = ? WHERE id = ?', [JSON.stringify(['bought']), run.contact.id]);
    const { engine } = engineAt();
    await engine.runUntilIdle();
    const detail = await run.timeline();
    expect(detail).to.include({ status: 'cancelled', currentStepId: 'chat' });
    expect(detail.reason).to.contain('bought');
  });
});
