import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { caller } from '../support/app';
import { browserSuite, lookAtBothWidths, serveTestDashboard, signInHere } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { buildTenant } from '../support/factories';

// The message editor names a template that does not parse at its line as it is typed, before
// any preview contact is chosen (issue 37, item 3): the marketer sees the mistake where they make
// it, not only once they pick someone to preview for.

const TITLE = browserSuite('the message editor shows Liquid parse errors as they are typed, without a preview contact');

describe(TITLE, function () {
  this.timeout(120_000);
  const dashboard = serveTestDashboard();
  let page: Page;
  beforeEach(async () => (page = await dashboard.newPage()));

  it('marks the line of an unclosed tag and a broken subject while no contact is chosen, and clears them once mended', async () => {
    const tenant = await buildTenant();
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Welcome',
      status: 'active',
      steps: [{ id: 'welcome', type: 'email', subject: 'Welcome', html: '<p>Hi</p>' }],
    });
    const user = await buildUser(tenant.accountId);
    await page.goto(`${dashboard.base}/dashboard/sequences/${sequence.id}/messages/welcome`);
    await signInHere(page, user.email);
    const html = page.getByRole('textbox', { name: 'HTML' });
    await html.waitFor();
    await page.getByText('Choose a contact to see the message as they would get it.').waitFor();

    await html.fill(['<h1>Hello</h1>', '<p>Plan</p>', '{% if contact.firstName %}<p>Hi</p>'].join('\n'));
    const htmlError = page.getByRole('alert').filter({ hasText: 'html does not parse' });
    await htmlError.waitFor();
    expect(await htmlError.innerText()).to.match(/^Line 3: html does not parse: line 3, column 1: tag .*not closed/);
    expect(await html.locator('.cm-template-error').getAttribute('data-error-line')).to.equal('3');
    expect(await html.getAttribute('aria-describedby')).to.be.a('string');

    const subject = page.getByRole('textbox', { name: 'Subject' });
    await subject.fill('Welcome {{ contact.firstName ');
    await page.getByRole('alert').filter({ hasText: 'subject does not parse' }).waitFor();
    expect(await page.getByLabel('Preview for the contact').inputValue()).to.equal('');
    await html.scrollIntoViewIfNeeded();
    await lookAtBothWidths(page, 'message-editor-live-errors');

    await subject.fill('Welcome {{ contact.firstName }}');
    await html.fill(['<h1>Hello</h1>', '<p>Plan</p>', '{% if contact.firstName %}<p>Hi</p>{% endif %}'].join('\n'));
    await page.waitForFunction(() => document.querySelectorAll('[role="alert"]').length === 0);
    expect(await html.locator('.cm-template-error').count()).to.equal(0);
  });
});
