import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { caller } from '../support/app';
import { browserSuite, lookAtBothWidths, PHONE, serveTestDashboard, signInAt } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { buildTenant } from '../support/factories';

// Issue 37, item 11: the Sequences list fits a laptop. At 1280 px its table ran past its box:
// the Archive buttons were cut off and the actions' column had no header. Now the whole table,
// an "Actions" header and every row's buttons, fits at 1280; on a phone the table scrolls
// inside its own box, never the page.

describe(browserSuite('the sequences list at 1280 px and on a phone'), function () {
  this.timeout(90_000);
  const dashboard = serveTestDashboard();

  // How far the table reaches past its box, and where each row's last button ends against it.
  async function overflow(page: Page) {
    return page.locator('.table-wrap').evaluate((wrap) => {
      const box = wrap.getBoundingClientRect();
      const buttons = [...wrap.querySelectorAll('td.actions-cell button')].map((button) => button.getBoundingClientRect());
      return { past: wrap.scrollWidth - wrap.clientWidth, clipped: buttons.filter((button) => button.right > box.right + 0.5 || button.width === 0).length, buttons: buttons.length };
    });
  }

  it('shows every column, an Actions header and each Archive button whole at 1280 px, and scrolls in its box on a phone', async () => {
    const tenant = await buildTenant();
    const api = caller(tenant.key);
    const steps = [{ id: 'settle', type: 'wait', duration: 'P1D' }] as const;
    await api.sequences.create({ name: 'Welcome', status: 'active', steps: [...steps] });
    await api.sequences.create({ name: 'Abandoned cart reminder for returning customers', status: 'paused', steps: [...steps] });
    await api.sequences.create({ name: 'Win-back', status: 'draft' });
    const user = await buildUser(tenant.accountId);
    const page = await dashboard.newPage();
    await signInAt(page, `${dashboard.base}/dashboard/sequences`, user.email);
    const table = page.getByRole('group', { name: 'Sequences, newest first' });
    await table.getByRole('link', { name: 'Welcome' }).waitFor();

    const header = table.getByRole('columnheader', { name: 'Actions' });
    expect(await header.isVisible()).to.equal(true);
    expect(await header.evaluate((th) => th.getBoundingClientRect().width > 20 && !th.querySelector('.visually-hidden'))).to.equal(true);
    const desktop = await overflow(page);
    expect(desktop, 'at 1280 px').to.deep.equal({ past: 0, clipped: 0, buttons: 6 });
    expect(await table.getByRole('button', { name: 'Archive Welcome' }).filter({ visible: true }).count()).to.equal(1);
    await lookAtBothWidths(page, 'sequences-list-fits');

    // On a phone the buttons sit under each name, and the wide table scrolls in its box.
    await page.setViewportSize(PHONE);
    expect(await page.locator('.table-wrap').evaluate((wrap) => getComputedStyle(wrap).overflowX)).to.equal('auto');
    await table.getByRole('button', { name: 'Archive Welcome' }).filter({ visible: true }).waitFor();
  });
});
