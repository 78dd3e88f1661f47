import { expect } from 'chai';
import { caller } from '../support/app';
import { browserSuite, lookAtBothWidths, serveTestDashboard, signInAt } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { buildContact, buildTenant } from '../support/factories';
import { engineAt } from '../services/engine/support';

// Issue 37, item 8: a paused run looks paused. Its wait step kept the blue "Running" badge on
// the run's timeline, as if the run still went on; now the step under way says Paused, on the
// run's page and on the contact's, and says Running again once resumed.

describe(browserSuite('a paused run on its timeline'), function () {
  this.timeout(90_000);
  const dashboard = serveTestDashboard();

  it("shows the wait step of a paused run as Paused, on the run's page and the contact's, and Running once resumed", async () => {
    const tenant = await buildTenant();
    const api = caller(tenant.key);
    const { sequence } = await api.sequences.create({
      name: 'Welcome',
      status: 'active',
      steps: [
        { id: 'settle', type: 'wait', duration: 'P1D' },
        { id: 'welcomed', type: 'tag', add: ['welcomed'] },
      ],
    });
    const contact = await buildContact(tenant.accountId, { email: 'ada@example.com' });
    await api.sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    const [run] = (await api.sequences.runs({ id: sequence.id })).runs;
    await engineAt().engine.runUntilIdle();
    await api.sequences.pauseRun({ id: sequence.id, runId: run!.id });
    const user = await buildUser(tenant.accountId);
    const page = await dashboard.newPage();

    await signInAt(page, `${dashboard.base}/dashboard/runs/${run!.id}`, user.email);
    await page.getByRole('heading', { name: /Run Paused/ }).waitFor();
    const event = page.locator('.event').first();
    await event.locator('.step-id', { hasText: 'settle' }).waitFor();
    expect(await event.locator('.badge').innerText()).to.equal('Paused');
    expect(await page.locator('.timeline-wrap').getByText('Running', { exact: true }).count()).to.equal(0);
    await lookAtBothWidths(page, 'paused-run-page');

    await page.goto(`${dashboard.base}/dashboard/contacts/${contact.id}`);
    await page.getByRole('button', { name: 'Timeline of the run in Welcome' }).click();
    const inline = page.getByRole('region', { name: 'Timeline of the run in Welcome' });
    await inline.locator('.event .step-id', { hasText: 'settle' }).waitFor();
    expect(await inline.locator('.event .badge').allInnerTexts()).to.deep.equal(['Paused']);
    await lookAtBothWidths(page, 'paused-run-contact');

    await inline.getByRole('button', { name: 'Resume the run in Welcome' }).click();
    await inline.locator('.event .badge', { hasText: 'Running' }).waitFor();
  });
});
