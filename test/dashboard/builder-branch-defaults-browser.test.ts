import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { browserSuite, closeUp, lookAtBothWidths, serveTestDashboard } from '../support/browser';
import { atNewSequence, builderOf, cardOf, describedBy } from '../support/builder-page';

// Issue 37, item 1: a new Branch step used to start on tag "vip" with both paths to the first
// step, a loop saved without a word. Now its condition and paths start empty and must be chosen,
// and the card warns (without blocking) when both paths go to one step or one goes back.

describe(browserSuite('a new branch in the builder starts unchosen and warns about loops'), function () {
  this.timeout(120_000);
  const dashboard = serveTestDashboard();
  let page: Page;
  beforeEach(async () => {
    page = await dashboard.newPage();
  });

  it('asks for the condition and both paths, refuses to save them empty, and warns about a same-step or looping path', async () => {
    const steps = [
      { id: 'wait-1', type: 'wait', duration: 'P3D' },
      { id: 'hello', type: 'email', subject: 'Hello', html: '<p>Hi</p>' },
      { id: 'done', type: 'exit' },
    ];
    const { tenant: { key }, sequence: { id } } = await atNewSequence(dashboard, page, { name: 'Nudges', steps });
    const builder = builderOf(page);
    await cardOf(page, 3).waitFor();

    await builder.getByLabel('New step').selectOption({ label: 'Branch' });
    await builder.getByRole('button', { name: 'Add step' }).click();
    const branch = cardOf(page, 4);
    await branch.getByRole('button', { name: 'Move up step 4' }).click();
    const card = cardOf(page, 3);
    // Nothing is guessed: no tag, no step to go to.
    expect(await card.getByLabel('If').locator('option:checked').innerText()).to.equal('Choose a condition');
    expect(await card.getByLabel('Tag').count()).to.equal(0);
    expect(await card.getByLabel('Then go to').locator('option:checked').innerText()).to.equal('Choose a step');
    expect(await card.getByLabel('Else go to').locator('option:checked').innerText()).to.equal('Choose a step');
    expect(await card.locator('.step-what').innerText()).to.equal('If a condition not chosen yet go to a step not chosen yet, else a step not chosen yet');
    expect(await card.getByRole('list', { name: 'Warnings about step 3' }).count()).to.equal(0);

    // Saved as it is: refused at each field, nothing stored.
    await builder.getByRole('button', { name: 'Save steps' }).click();
    await card.getByText('3 problems in this step.').waitFor();
    expect(await describedBy(card.getByLabel('If'))).to.equal('Step "branch": choose a condition');
    expect(await describedBy(card.getByLabel('Then go to'))).to.equal('Step "branch": choose the step to go to when the condition holds');
    expect(await describedBy(card.getByLabel('Else go to'))).to.equal('Step "branch": choose the step to go to otherwise');
    expect((await dashboard.rest(key, 'GET', `/sequences/${id}`)).body.sequence.steps).to.deep.equal(steps);
    await lookAtBothWidths(page, 'builder-branch-unchosen');

    // Both paths to one step: said on the card, before saving.
    await card.getByLabel('If').selectOption({ label: 'Has a tag' });
    expect(await card.getByLabel('Tag').inputValue()).to.equal('');
    await card.getByLabel('Tag').fill('customer');
    await card.getByLabel('Then go to').selectOption({ label: '4. done (Exit)' });
    await card.getByLabel('Else go to').selectOption({ label: '4. done (Exit)' });
    const warnings = card.getByRole('list', { name: 'Warnings about step 3' });
    expect(await warnings.innerText()).to.equal('Both paths go to step 4. done: the condition makes no difference.');

    // A path back to an earlier step: a loop, said, and (with a wait on it) saved all the same.
    await card.getByLabel('Else go to').selectOption({ label: '1. wait-1 (Wait)' });
    expect(await warnings.innerText()).to.equal('The "else" path goes back to step 1. wait-1: a loop, so runs go round again. Keep it only with a wait on the way (without one, saving is refused).');
    await lookAtBothWidths(page, 'builder-branch-loop-warning');
    await closeUp(page, card, 'builder-branch-loop-warning-card');
    await builder.getByRole('button', { name: 'Save steps' }).click();
    await builder.getByText('Saved as version 2.').waitFor();
    const saved = (await dashboard.rest(key, 'GET', `/sequences/${id}`)).body.sequence;
    expect(saved.steps[2]).to.deep.equal({ id: 'branch', type: 'branch', if: { tag: 'customer' }, then: 'done', else: 'wait-1' });
    expect(await warnings.innerText()).to.contain('goes back to step 1. wait-1');
  });
});
