import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { browserSuite, closeUp, lookAtBothWidths, serveTestDashboard } from '../support/browser';
import { atNewSequence, builderOf, cardOf } from '../support/builder-page';

// Issue 37, item 2: "Add step" only appended, after the exit, where no step leads. Now "Add a
// step" sits between every two cards (and after the one being edited), and the new step is wired
// in: the step before leads to it, and it leads where that step led.

describe(browserSuite('adding a step between two cards of the builder'), function () {
  this.timeout(120_000);
  const dashboard = serveTestDashboard();
  let page: Page;
  beforeEach(async () => {
    page = await dashboard.newPage();
  });

  const ids = async () => builderOf(page).locator('.flow-step .step-id').allInnerTexts();
  const addAfter = async (n: number, type: string) => {
    await builderOf(page).getByRole('button', { name: `Add a step after step ${n}` }).click();
    const here = builderOf(page).getByRole('group', { name: `A new step after step ${n}` });
    await here.getByLabel('Type of the new step').selectOption({ label: type });
    await here.getByRole('button', { name: `Insert step after step ${n}` }).click();
  };

  it('inserts a step after a wait, in the flow, and after the step being edited', async () => {
    const steps = [
      { id: 'wait-1', type: 'wait', duration: 'P1D' },
      { id: 'hello', type: 'email', subject: 'Hello', html: '<p>Hi</p>' },
      { id: 'done', type: 'exit' },
    ];
    const { tenant: { key }, sequence: { id } } = await atNewSequence(dashboard, page, { name: 'Welcome', steps });
    const builder = builderOf(page);
    await cardOf(page, 3).waitFor();
    // Between every two cards; not after the exit that ends the flow.
    expect(await builder.getByRole('button', { name: /^\+ Add a step after step \d$/ }).count()).to.equal(2);

    await addAfter(1, 'Tag');
    expect(await ids()).to.deep.equal(['wait-1', 'tag', 'hello', 'done']);
    // Runs go on to it from the wait and from it to the email: no card is cut off.
    expect(await builder.locator('.flow-note').count()).to.equal(0);
    await cardOf(page, 2).getByLabel('Tags to add').waitFor();
    await lookAtBothWidths(page, 'builder-add-between');
    await closeUp(page, cardOf(page, 1), 'builder-add-between-card');

    // The card being edited has one after it, even the last.
    await cardOf(page, 4).getByRole('button', { name: 'Edit step 4' }).click();
    await builder.getByRole('button', { name: 'Add a step after step 4' }).waitFor();

    await builder.getByRole('button', { name: 'Save steps' }).click();
    await builder.getByText('Saved as version 2.').waitFor();
    const saved = (await dashboard.rest(key, 'GET', `/sequences/${id}`)).body.sequence;
    expect(saved.steps.map((s: { id: string }) => s.id)).to.deep.equal(['wait-1', 'tag', 'hello', 'done']);
  });

  it("inserts a step on a branch's path to the following card: the path now goes to it", async () => {
    const steps = [
      { id: 'check', type: 'branch', if: { tag: 'vip' }, then: 'vip-mail', else: 'done' },
      { id: 'vip-mail', type: 'email', subject: 'For you', html: '<p>Hi</p>' },
      { id: 'done', type: 'exit' },
    ];
    const { tenant: { key }, sequence: { id } } = await atNewSequence(dashboard, page, { name: 'VIP', steps });
    await cardOf(page, 3).waitFor();

    await addAfter(1, 'Wait');
    expect(await ids()).to.deep.equal(['check', 'wait', 'vip-mail', 'done']);
    const fork = cardOf(page, 1).getByRole('group', { name: 'The two paths of step 1' });
    expect((await fork.innerText()).replace(/\s+/g, ' ')).to.equal('If has tag vip go to 2. wait Otherwise go to 4. done');
    expect(await cardOf(page, 2).locator('.flow-note').innerText()).to.equal('Reached only by a jump from another step.');
    expect(await cardOf(page, 3).locator('.flow-note').count()).to.equal(0);
    await lookAtBothWidths(page, 'builder-add-on-branch-path');

    await builderOf(page).getByRole('button', { name: 'Save steps' }).click();
    await builderOf(page).getByText('Saved as version 2.').waitFor();
    const saved = (await dashboard.rest(key, 'GET', `/sequences/${id}`)).body.sequence;
    expect(saved.steps[0]).to.deep.equal({ id: 'check', type: 'branch', if: { tag: 'vip' }, then: 'wait', else: 'done' });
    expect(saved.steps[1]).to.deep.equal({ id: 'wait', type: 'wait', duration: 'P1D' });
  });
});
