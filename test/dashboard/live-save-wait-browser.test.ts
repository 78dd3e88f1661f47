import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { browserSuite, closeUp, lookAtBothWidths, serveTestDashboard, signInAt } from '../support/browser';
import { buildDashboardTenant } from '../support/dashboard';
import { engineAt } from '../services/engine/support';

// "Save and move runs" on a live sequence whose runs are half-way through a 1-day wait (issue
// 37, item 10): the dialog says, for each step map choice, what the runs will do there (the same
// wait keeps its end, a changed one starts again), and the moved runs are still due when they
// were before the save.

describe(browserSuite('saving a live sequence: runs at a wait keep its end'), function () {
  this.timeout(120_000);
  const dashboard = serveTestDashboard();
  let page: Page;
  beforeEach(async () => {
    page = await dashboard.newPage();
  });

  it('says what a wait does at each choice, and the moved runs keep their due time', async () => {
    const { user, key } = await buildDashboardTenant();
    const created = await dashboard.rest(key, 'POST', '/sequences', {
      name: 'Trial',
      status: 'active',
      steps: [
        { id: 'wait-1', type: 'wait', duration: 'P1D' },
        { id: 'mark', type: 'tag', add: ['trial'] },
        { id: 'wait-2', type: 'wait', duration: 'PT2H' },
        { id: 'done', type: 'exit' },
      ],
    });
    expect(created.status).to.equal(201);
    const id = created.body.sequence.id;
    for (const email of ['ann@example.com', 'ben@example.com']) expect((await dashboard.rest(key, 'POST', `/sequences/${id}/enroll-by-email`, { email })).status).to.equal(201);
    // The engine begins the wait: each run is due a day from now.
    const { engine } = engineAt();
    await engine.runUntilIdle();
    const runs = async () =>
      ((await dashboard.rest(key, 'GET', `/sequences/${id}/runs`)).body.runs as Array<{ version: number; currentStepId: string; dueAt: string }>).map(
        (r) => `v${r.version}:${r.currentStepId}:${r.dueAt}`,
      );
    const before = await runs();
    expect(before).to.have.length(2);
    for (const run of before) expect(run).to.match(/^v1:wait-1:20\d\d-/);

    await signInAt(page, `${dashboard.base}/dashboard/sequences/${id}`, user.email);
    const builder = page.getByRole('region', { name: 'Builder' });
    const card = builder.locator('.flow-step').nth(1);
    await card.getByRole('button', { name: 'Edit step 2' }).click();
    await card.getByLabel('Step id').fill('mark-trial');
    await builder.getByRole('button', { name: 'Save steps' }).click();
    const dialog = page.getByRole('dialog', { name: 'Save as version 2?' });
    await dialog.waitFor();
    await dialog.getByText('runs moved to the same wait (the same duration) keep its end', { exact: false }).waitFor();
    const mapping = dialog.getByLabel('Runs at wait-1 go to');
    expect(await mapping.inputValue()).to.equal('wait-1');
    await dialog.getByText('The same wait: their wait keeps its end.').waitFor();
    await mapping.selectOption('wait-2');
    await dialog.getByText('A changed wait: their wait starts again from the save.').waitFor();
    await lookAtBothWidths(page, 'live-save-changed-wait');
    await closeUp(page, dialog, 'live-save-changed-wait-dialog');
    await mapping.selectOption('wait-1');
    await dialog.getByText('The same wait: their wait keeps its end.').waitFor();
    await dialog.getByRole('button', { name: 'Save and move runs' }).click();
    await builder.getByText('Saved as version 2. 2 active runs moved to it.').waitFor();
    expect(await runs()).to.deep.equal(before.map((run) => run.replace(/^v1:/, 'v2:')));
  });
});
