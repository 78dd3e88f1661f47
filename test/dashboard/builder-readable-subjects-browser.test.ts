import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { caller } from '../support/app';
import { browserSuite, closeUp, lookAtBothWidths, serveTestDashboard, signInAt } from '../support/browser';
import { builderOf, cardOf } from '../support/builder-page';
import { buildUser } from '../support/dashboard';
import { buildContact, buildTenant } from '../support/factories';
import { engineAt } from '../services/engine/support';

// Issue 37, item 12: an email step read as raw Liquid (Email "Welcome, {{ contact.firstName |
// default: "there" }}!") in the builder, the version diff and the run timeline. All three now
// read its subject as a person does, each variable a chip: Email "Welcome, [first name]!".

describe(browserSuite('email subjects read as a person reads them'), function () {
  this.timeout(120_000);
  const dashboard = serveTestDashboard();
  let page: Page;
  beforeEach(async () => {
    page = await dashboard.newPage();
  });

  it('shows the subject with its variables as chips in the builder, the version diff and the run timeline', async () => {
    const tenant = await buildTenant();
    const html = '<p>Hi</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>';
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Welcome',
      status: 'active',
      steps: [
        { id: 'hello', type: 'email', subject: 'Welcome, {{ contact.firstName | default: "there" }}!', html },
        { id: 'done', type: 'exit' },
      ],
    });
    const contact = await buildContact(tenant.accountId, { email: 'ada@example.com', firstName: 'Ada' });
    await caller(tenant.key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    const [run] = (await caller(tenant.key).sequences.runs({ id: sequence.id })).runs;
    await engineAt().engine.runUntilIdle();
    // Version 2: another subject, with a custom field.
    const patched = await dashboard.rest(tenant.key, 'PATCH', `/sequences/${sequence.id}`, {
      steps: [
        { id: 'hello', type: 'email', subject: 'Your {{ contact.customFields.plan }} plan, {{contact.firstName}}', html },
        { id: 'done', type: 'exit' },
      ],
    });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);

    const user = await buildUser(tenant.accountId);
    await signInAt(page, `${dashboard.base}/dashboard/sequences/${sequence.id}`, user.email);
    // The builder's card (its text as copied or read aloud: the chips' brackets are there).
    const what = cardOf(page, 1).locator('.step-what');
    await what.waitFor();
    expect(await what.textContent()).to.equal('Email "Your [plan] plan, [first name]"');
    expect(await what.locator('.variable-chip').allTextContents()).to.deep.equal(['[plan]', '[first name]']);
    expect(await builderOf(page).innerText()).to.not.contain('{{');
    await closeUp(page, cardOf(page, 1), 'builder-subject-chips');

    // The version diff, and each version's steps.
    const versions = page.getByRole('region', { name: 'Versions' });
    const diff = versions.getByRole('region', { name: 'Changes from version 1 to version 2' });
    expect(await diff.locator('ul.changed > li').textContent()).to.equal('hello (subject): Email "Welcome, [first name]!" → Email "Your [plan] plan, [first name]"');
    expect(await diff.locator('.variable-chip').count()).to.equal(3);
    expect(await versions.innerText()).to.not.contain('{{');
    await lookAtBothWidths(page, 'versions-subject-chips');

    // The run's timeline, on the version it ran.
    await page.goto(`${dashboard.base}/dashboard/runs/${run!.id}`);
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    const step = page.locator('.timeline .event-what').first();
    expect(await step.textContent()).to.equal('Email "Welcome, [first name]!"');
    expect(await step.locator('.variable-chip').allTextContents()).to.deep.equal(['[first name]']);
    await lookAtBothWidths(page, 'timeline-subject-chips');
  });
});
