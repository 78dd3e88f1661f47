import { expect } from 'chai';
import { caller } from '../support/app';
import { browserSuite, lookAtBothWidths, serveTestDashboard, signInAt } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { buildContact, buildTenant } from '../support/factories';

// Issue 37, item 9: a run's timeline is one click from its sequence. The sequence page's runs
// table named each run's contact only (a contact page, then its runs, then the timeline); now
// each row also links to the run's own page.

describe(browserSuite("a sequence's runs and their pages"), function () {
  this.timeout(90_000);
  const dashboard = serveTestDashboard();

  it("opens a run's page, with its timeline, from the sequence page's runs table", async () => {
    const tenant = await buildTenant();
    const api = caller(tenant.key);
    const { sequence } = await api.sequences.create({ name: 'Welcome', status: 'active', steps: [{ id: 'settle', type: 'wait', duration: 'P1D' }] });
    const ada = await buildContact(tenant.accountId, { email: 'ada@example.com' });
    const grace = await buildContact(tenant.accountId, { email: 'grace@example.com' });
    await api.sequences.enroll({ id: sequence.id, contactIds: [ada.id, grace.id] });
    const runs = (await api.sequences.runs({ id: sequence.id })).runs;
    const adaRun = runs.find((run) => run.contactId === ada.id)!;
    const user = await buildUser(tenant.accountId);
    const page = await dashboard.newPage();

    await signInAt(page, `${dashboard.base}/dashboard/sequences/${sequence.id}`, user.email);
    const table = page.getByRole('group', { name: 'Runs of this sequence, newest first' });
    const link = table.getByRole('link', { name: 'Open the run of ada@example.com' });
    await link.waitFor();
    expect(await table.getByRole('link', { name: /^Open the run of / }).count()).to.equal(2);
    await lookAtBothWidths(page, 'sequence-runs-links');

    await link.click();
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    expect(new URL(page.url()).pathname).to.equal(`/dashboard/runs/${adaRun.id}`);
    await page.getByRole('heading', { name: 'Run of Welcome for ada@example.com', level: 1 }).waitFor();
  });
});
