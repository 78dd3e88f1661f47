import { expect } from 'chai';
import { caller } from '../support/app';
import { browserSuite, lookAtBothWidths, serveTestDashboard, signInAt } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { buildTenant } from '../support/factories';

// Issue 37, item 19: a sequence page leaves devtools clean. The page's CSP allows no eval, and
// zod, which the builder loads, used to probe for it with Function(''): a red CSP error on
// every sequence page. The console's errors are collected while the page loads, is edited and
// validated, and none may come from the CSP.

describe(browserSuite('a sequence page and the CSP'), function () {
  this.timeout(90_000);
  const dashboard = serveTestDashboard();

  it('opens a sequence and validates its steps with no CSP or eval error in the console', async () => {
    const tenant = await buildTenant();
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Welcome',
      status: 'draft',
      steps: [{ id: 'settle', type: 'wait', duration: 'PT1H' }],
      exitWhen: [{ tag: 'purchased' }],
    });
    const user = await buildUser(tenant.accountId);
    const page = await dashboard.newPage();
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective}`));
    });
    await signInAt(page, `${dashboard.base}/dashboard/sequences/${sequence.id}`, user.email);
    await page.getByRole('region', { name: 'Builder' }).waitFor();
    // Saving the exit rules runs the API's zod schemas in the page before anything is sent.
    const rules = page.getByRole('region', { name: 'Exit rules' });
    await rules.getByLabel('Rule 1: tag').fill('bought');
    await rules.getByRole('button', { name: 'Save exit rules' }).click();
    await rules.getByText('Exit rules saved.').waitFor();
    await lookAtBothWidths(page, 'sequence-page-csp');
    expect(errors.filter((text) => /content security policy|CSP|unsafe-eval|eval/i.test(text))).to.deep.equal([]);
  });
});
