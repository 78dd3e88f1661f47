import { expect } from 'chai';
import { caller } from '../support/app';
import { browserSuite, lookAtBothWidths, serveTestDashboard } from '../support/browser';
import { atNewSequence } from '../support/builder-page';

// Issue 37, item 17: the sequence page's save buttons agree. "Save steps" waited for a change
// while "Save exit rules" and "Save sending window" could be pressed with nothing changed; now
// each is disabled until its form differs from what is stored, and again once saved.

describe(browserSuite('the sequence page save buttons'), function () {
  this.timeout(90_000);
  const dashboard = serveTestDashboard();

  it('keeps Save steps, Save exit rules and Save sending window disabled until something changed, and after it is saved', async () => {
    const page = await dashboard.newPage();
    const { tenant, sequence } = await atNewSequence(dashboard, page, {
      name: 'Welcome',
      status: 'draft',
      steps: [{ id: 'settle', type: 'wait', duration: 'PT1H' }],
      exitWhen: [{ tag: 'purchased' }],
      sendingWindow: { timeZone: 'Europe/Paris', from: '09:00', to: '17:00' },
    });
    await page.getByRole('region', { name: 'Builder' }).waitFor();
    const saveSteps = page.getByRole('button', { name: 'Save steps' });
    const rules = page.getByRole('region', { name: 'Exit rules' });
    const saveRules = rules.getByRole('button', { name: 'Save exit rules' });
    const window = page.getByRole('region', { name: 'Sending window' });
    const saveWindow = window.getByRole('button', { name: 'Save sending window' });
    expect(await saveSteps.isDisabled(), 'Save steps, unchanged').to.equal(true);
    expect(await saveRules.isDisabled(), 'Save exit rules, unchanged').to.equal(true);
    expect(await saveWindow.isDisabled(), 'Save sending window, unchanged').to.equal(true);
    await lookAtBothWidths(page, 'save-buttons-unchanged');

    // A change enables its own button only; changed back, it is disabled again.
    await rules.getByLabel('Rule 1: tag').fill('bought');
    expect(await saveRules.isEnabled(), 'Save exit rules, changed').to.equal(true);
    expect(await saveWindow.isDisabled()).to.equal(true);
    await rules.getByLabel('Rule 1: tag').fill('purchased');
    expect(await saveRules.isDisabled(), 'Save exit rules, changed back').to.equal(true);

    await window.getByLabel('To', { exact: true }).fill('18:00');
    expect(await saveWindow.isEnabled(), 'Save sending window, changed').to.equal(true);
    await saveWindow.click();
    await window.getByText('Sending window saved.').waitFor();
    // Disabled again once the page has the saved sequence back.
    await saveWindow.and(page.locator(':disabled')).waitFor({ timeout: 5_000 });
    const { sequence: stored } = await caller(tenant.key).sequences.get({ id: sequence.id });
    expect(stored.sendingWindow).to.deep.include({ timeZone: 'Europe/Paris', from: '09:00', to: '18:00' });

    await rules.getByRole('button', { name: 'Add a rule' }).click();
    await rules.getByLabel('Rule 2: tag').fill('churned');
    await saveRules.click();
    await rules.getByText('Exit rules saved.').waitFor();
    await saveRules.and(page.locator(':disabled')).waitFor({ timeout: 5_000 });
    expect((await caller(tenant.key).sequences.get({ id: sequence.id })).sequence.exitWhen).to.deep.equal([{ tag: 'purchased' }, { tag: 'churned' }]);
    await lookAtBothWidths(page, 'save-buttons-saved');
  });

  it('keeps Save entry and Save goal disabled until their form differs from what is stored', async () => {
    const page = await dashboard.newPage();
    const { tenant, sequence } = await atNewSequence(dashboard, page, {
      name: 'Carts',
      status: 'draft',
      steps: [{ id: 'settle', type: 'wait', duration: 'PT1H' }],
      entry: { activity: 'cart_abandoned', reentry: 'never' },
      goal: { activity: 'checkout_completed', within: 'P7D' },
    });
    const entry = page.getByRole('region', { name: 'Entry by activity' });
    const goal = page.getByRole('region', { name: 'Goal' });
    const saveEntry = entry.getByRole('button', { name: 'Save entry' });
    const saveGoal = goal.getByRole('button', { name: 'Save goal' });
    await saveEntry.waitFor();
    expect(await saveEntry.isDisabled(), 'Save entry, unchanged').to.equal(true);
    expect(await saveGoal.isDisabled(), 'Save goal, unchanged').to.equal(true);

    await goal.getByLabel('Goal activity').fill('order_placed');
    expect(await saveGoal.isEnabled(), 'Save goal, changed').to.equal(true);
    expect(await saveEntry.isDisabled()).to.equal(true);
    await goal.getByLabel('Goal activity').fill('checkout_completed');
    expect(await saveGoal.isDisabled(), 'Save goal, changed back').to.equal(true);

    await entry.getByLabel('Entry activity').fill('cart_left');
    await saveEntry.click();
    await entry.getByText('Entry saved.').waitFor();
    await saveEntry.and(page.locator(':disabled')).waitFor({ timeout: 5_000 });
    expect((await caller(tenant.key).sequences.get({ id: sequence.id })).sequence.entry).to.deep.include({ activity: 'cart_left', reentry: 'never' });
    await lookAtBothWidths(page, 'save-buttons-entry-goal');
  });
});
