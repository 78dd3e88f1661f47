import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { browserSuite, closeUp, lookAtBothWidths, serveTestDashboard, signInAt } from '../support/browser';
import { builderOf, cardOf, describedBy } from '../support/builder-page';
import { buildDashboardTenant } from '../support/dashboard';

// Issue 37, item 4: a refused save said "Please correct the fields marked below" under the steps,
// whose fields were above. Now one summary at the top of the builder lists each problem, each a
// link to its field, and each message is shown once at its field.

describe(browserSuite('the builder lists a refused save\'s problems at its top'), function () {
  this.timeout(120_000);
  const dashboard = serveTestDashboard();
  let page: Page;
  beforeEach(async () => {
    page = await dashboard.newPage();
  });

  it('lists each problem once above the steps, each a link that focuses its field', async () => {
    const { user, key } = await buildDashboardTenant();
    const steps = [
      { id: 'wait-1', type: 'wait', duration: 'P1D' },
      { id: 'hello', type: 'email', subject: 'Hello', html: '<p>Hi</p>' },
      { id: 'done', type: 'exit' },
    ];
    const id = (await dashboard.rest(key, 'POST', '/sequences', { name: 'Welcome', steps })).body.sequence.id;
    // What the API says of two templates that do not parse.
    const broken = [steps[0], { ...steps[1], subject: 'Welcome {{ contact.firstName ', html: '<p>{% if %}</p>' }, steps[2]];
    const refused = await dashboard.rest(key, 'PATCH', `/sequences/${id}`, { steps: broken });
    expect(refused.status).to.equal(400);
    const messages: Record<string, string> = Object.fromEntries(refused.body.details.map((d: { path: string; message: string }) => [d.path, d.message]));
    expect(Object.keys(messages)).to.deep.equal(['steps.1.subject', 'steps.1.html']);

    await signInAt(page, `${dashboard.base}/dashboard/sequences/${id}`, user.email);
    const builder = builderOf(page);
    const hello = cardOf(page, 2);
    await hello.getByRole('button', { name: 'Edit step 2' }).click();
    await hello.getByLabel('Subject').fill(broken[1]!.subject as string);
    await hello.getByLabel('HTML').fill(broken[1]!.html as string);
    await builder.getByRole('button', { name: 'Save steps' }).click();

    const summary = builder.getByRole('alert').filter({ hasText: 'Nothing was saved' });
    await summary.getByRole('heading', { name: 'Nothing was saved: 2 problems to correct' }).waitFor();
    expect(await summary.getByRole('link').allInnerTexts()).to.deep.equal([messages['steps.1.subject'], messages['steps.1.html']]);
    // At the top: above the first step, and nothing says "below" or "above" any more.
    expect((await summary.boundingBox())!.y).to.be.below((await cardOf(page, 1).boundingBox())!.y);
    expect(await page.getByText(/fields marked (below|above)/).count()).to.equal(0);
    // Each message once at its field (and once in the summary's link), never twice.
    for (const message of Object.values(messages)) expect(await builder.getByText(message, { exact: true }).count(), message).to.equal(2);
    expect(await describedBy(hello.getByLabel('Subject'))).to.contain(messages['steps.1.subject']);
    await lookAtBothWidths(page, 'builder-error-summary');
    await closeUp(page, summary, 'builder-error-summary-list');

    // A link takes the person to its field.
    await page.mouse.wheel(0, 3000);
    await summary.getByRole('link', { name: messages['steps.1.html'] }).click();
    expect(await hello.getByLabel('HTML').evaluate((el) => el === document.activeElement)).to.equal(true);
    await summary.getByRole('link', { name: messages['steps.1.subject'] }).click();
    expect(await hello.getByLabel('Subject').evaluate((el) => el === document.activeElement)).to.equal(true);

    // A field corrected leaves the list; the save then goes through.
    await hello.getByLabel('Subject').fill('Welcome, {{ contact.firstName }}');
    await summary.getByRole('heading', { name: 'Nothing was saved: one problem to correct' }).waitFor();
    // The list shortens where it is: the person typing stays in the field.
    expect(await hello.getByLabel('Subject').evaluate((el) => el === document.activeElement)).to.equal(true);
    await hello.getByLabel('HTML').fill('<p>Hi</p>');
    expect(await summary.count()).to.equal(0);
    await builder.getByRole('button', { name: 'Save steps' }).click();
    await builder.getByText('Saved as version 2.').waitFor();
  });
});
