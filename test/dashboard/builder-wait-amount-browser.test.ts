import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { caller } from '../support/app';
import { browserSuite, lookAtBothWidths, serveTestDashboard } from '../support/browser';
import { atNewSequence, builderOf, cardOf } from '../support/builder-page';

// A wait in the builder is a number and a unit (issue 37, item 7), not ISO 8601 typed by hand:
// the form converts, the API stores ISO 8601, and a stored wait no single unit says (P1DT2H)
// shows in the largest unit that divides it exactly (26 hours).

const TITLE = browserSuite('the builder types waits as a number and a unit');

describe(TITLE, function () {
  this.timeout(120_000);
  const dashboard = serveTestDashboard();
  let page: Page;
  beforeEach(async () => (page = await dashboard.newPage()));
  const builder = () => builderOf(page);
  const card = (n: number) => cardOf(page, n);

  it('shows P1DT2H as 26 hours and a PT3H timeout as 3 hours, refuses 0, and saves 3 days and 2 weeks as P3D and P2W', async () => {
    const { tenant, sequence } = await atNewSequence(dashboard, page, {
      name: 'Cart',
      status: 'active',
      steps: [
        { id: 'pause', type: 'wait', duration: 'P1DT2H' },
        { id: 'checkout', type: 'wait_for', activity: 'checkout_completed', timeout: 'PT3H', onTimeout: 'done' },
        { id: 'done', type: 'exit' },
      ],
    });

    await card(1).getByRole('button', { name: 'Edit step 1' }).click();
    const wait = card(1).getByRole('group', { name: 'Duration' });
    expect(await wait.getByLabel('Amount').inputValue()).to.equal('26');
    expect(await wait.getByLabel('Unit').locator('option:checked').innerText()).to.equal('Hours');
    expect(await wait.getByRole('option').allInnerTexts()).to.deep.equal(['Minutes', 'Hours', 'Days', 'Weeks']);

    await card(2).getByRole('button', { name: 'Edit step 2' }).click();
    const timeout = card(2).getByRole('group', { name: 'Timeout' });
    expect(await timeout.getByLabel('Amount').inputValue()).to.equal('3');
    expect(await timeout.getByLabel('Unit').locator('option:checked').innerText()).to.equal('Hours');

    // Not a length yet: said at the field, and nothing can be saved.
    await wait.getByLabel('Amount').fill('0');
    await wait.getByText('A whole number, 1 or more').waitFor();
    expect(await builder().getByRole('button', { name: 'Save steps' }).isDisabled()).to.equal(true);
    await lookAtBothWidths(page, 'builder-wait-amount-refused');

    await wait.getByLabel('Amount').fill('3');
    await wait.getByLabel('Unit').selectOption({ label: 'Days' });
    await timeout.getByLabel('Amount').fill('2');
    await timeout.getByLabel('Unit').selectOption({ label: 'Weeks' });
    await lookAtBothWidths(page, 'builder-wait-amount');
    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText('Saved as version 2.').waitFor();
    const steps = (await caller(tenant.key).sequences.get({ id: sequence.id })).sequence.steps;
    expect(steps[0]).to.deep.equal({ id: 'pause', type: 'wait', duration: 'P3D' });
    expect(steps[1]).to.include({ timeout: 'P2W' });
  });
});
