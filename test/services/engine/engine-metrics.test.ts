import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createMetrics } from '../../../src/metrics/metrics';
import { channelSettings } from '../../support/channels';
import { testDb } from '../../support/db';
import { engineAt, enrolledRun } from './support';

// What the engine reports at GET /metrics (docs/operations.md "Metrics").

describe('sequence engine metrics', () => {
  it('counts steps by type and outcome, measures the due lag, and counts runs by status', async () => {
    const metrics = createMetrics(testDb());
    const run = await enrolledRun([{ id: 'w', type: 'wait', duration: 'PT1M' }, { id: 'mark', type: 'tag', add: ['x'] }]);
    const { engine, advance } = engineAt(Date.now() + 1, { metrics: metrics.engine });
    await engine.runOnce();
    advance(60_000 + 2_500);
    await engine.runUntilIdle();
    expect((await run.timeline()).status).to.equal('completed');
    const text = await metrics.registry.metrics();
    expect(text).to.include('sequence_steps_total{type="wait",outcome="began"} 1');
    expect(text).to.include('sequence_steps_total{type="wait",outcome="succeeded"} 1');
    expect(text).to.include('sequence_steps_total{type="tag",outcome="succeeded"} 1');
    // Two claims: the start (lag 0), and the end of the wait (2.5 s late by the test's clock),
    // whose pass takes the tag right after it too (a chain of local steps).
    expect(text).to.include('sequence_due_lag_seconds_count 2');
    expect(text).to.match(/sequence_due_lag_seconds_bucket\{le="1"\} 1\n/);
    expect(text).to.include('sequence_runs{status="completed"} 1');
    expect(text).to.include('sequence_runs{status="pending"} 0');
  });

  it('counts each status a message step\'s message reaches, once its record commits', async () => {
    const metrics = createMetrics(testDb());
    const mail = { id: 'mail', type: 'email', subject: 'Hi', html: '<p>Hi</p>' };
    const captured = await enrolledRun([mail]);
    const skipped = await enrolledRun([mail], {}, { emailSubscriptionStatus: 'unsubscribed' });
    const outboxDir = mkdtempSync(path.join(tmpdir(), 'svc-outbox-'));
    const settings = channelSettings({ emailFrom: 'shop@example.com' });
    const { engine } = engineAt(Date.now() + 1, { metrics: metrics.engine, messages: { settings, outboxDir, metrics: metrics.messages } });
    await engine.runUntilIdle();
    expect((await captured.timeline()).status).to.equal('completed');
    expect((await skipped.timeline()).status).to.equal('completed');
    const text = await metrics.registry.metrics();
    expect(text).to.include('messages_total{channel="email",outcome="captured"} 1');
    expect(text).to.include('messages_total{channel="email",outcome="skipped"} 1');
    expect(text).to.include('sequence_steps_total{type="email",outcome="skipped"} 1');
  });
});
