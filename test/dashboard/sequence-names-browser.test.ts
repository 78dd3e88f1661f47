import { expect } from 'chai';
import { caller } from '../support/app';
import { browserSuite, lookAtBothWidths, serveTestDashboard, signInAt } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { buildContact, buildTenant } from '../support/factories';

// Issue 37, item 15: a sequence is called by its name everywhere. An archived sequence left the
// list the contact's runs took their names from, so its runs said "Sequence"; and every
// sequence page was headed and titled "Sequence". Now the contact's runs table, the timeline's
// heading, the sequence page's heading and the browser's tab say "Welcome", archived or not.

describe(browserSuite('sequence names on the dashboard'), function () {
  this.timeout(90_000);
  const dashboard = serveTestDashboard();

  it("names an archived sequence on the contact's runs, its timeline and its own page, heading and tab", async () => {
    const tenant = await buildTenant();
    const api = caller(tenant.key);
    const { sequence } = await api.sequences.create({ name: 'Welcome', status: 'active', steps: [{ id: 'settle', type: 'wait', duration: 'P1D' }] });
    const contact = await buildContact(tenant.accountId, { email: 'ada@example.com', firstName: 'Ada' });
    await api.sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    await api.sequences.update({ id: sequence.id, status: 'archived' });
    const user = await buildUser(tenant.accountId);
    const page = await dashboard.newPage();

    await signInAt(page, `${dashboard.base}/dashboard/contacts/${contact.id}`, user.email);
    const runs = page.getByRole('group', { name: 'Runs of this contact, newest first' });
    await runs.getByRole('row').nth(1).waitFor();
    expect(await runs.getByRole('rowheader').allInnerTexts()).to.deep.equal(['Welcome']);
    await runs.getByRole('button', { name: 'Timeline of the run in Welcome' }).click();
    await page.getByRole('heading', { name: 'Timeline of the run in Welcome' }).waitFor();
    await lookAtBothWidths(page, 'sequence-names-contact');

    await runs.getByRole('link', { name: 'Welcome' }).click();
    await page.getByRole('heading', { name: 'Welcome', level: 1 }).waitFor();
    expect(await page.title()).to.equal('Welcome · Contacts & Sequences');
    await lookAtBothWidths(page, 'sequence-names-page');
  });

  it('heads and titles an active sequence by its name, opened from the list', async () => {
    const tenant = await buildTenant();
    await caller(tenant.key).sequences.create({ name: 'Cart reminder', status: 'active', steps: [{ id: 'settle', type: 'wait', duration: 'P1D' }] });
    const user = await buildUser(tenant.accountId);
    const page = await dashboard.newPage();
    await signInAt(page, `${dashboard.base}/dashboard/sequences`, user.email);
    await page.getByRole('link', { name: 'Cart reminder' }).click();
    await page.getByRole('heading', { name: 'Cart reminder', level: 1 }).waitFor();
    expect(await page.title()).to.equal('Cart reminder · Contacts & Sequences');
    expect(await page.getByRole('heading', { name: 'Sequence', level: 1, exact: true }).count()).to.equal(0);
  });
});
