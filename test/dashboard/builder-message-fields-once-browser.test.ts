import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { caller } from '../support/app';
import { browserSuite, lookAtBothWidths, serveTestDashboard } from '../support/browser';
import { atNewSequence, builderOf, cardOf } from '../support/builder-page';

// A message step's form in the builder shows each template once (issue 37, item 5): opening the
// message editor puts its code fields in place of the plain Subject, HTML and text fields, or a
// WhatsApp step's parameter fields, instead of showing both sets, one above the other.

const TITLE = browserSuite('the builder shows a message step\'s templates once, with the editor open or not');

describe(TITLE, function () {
  this.timeout(120_000);
  const dashboard = serveTestDashboard();
  let page: Page;
  beforeEach(async () => (page = await dashboard.newPage()));
  const builder = () => builderOf(page);
  const card = (n: number) => cardOf(page, n);

  it('swaps the plain template fields for the editor\'s, and saves what was typed in the editor', async () => {
    const { tenant, sequence } = await atNewSequence(dashboard, page, {
      name: 'Welcome',
      status: 'active',
      steps: [
        { id: 'welcome', type: 'email', subject: 'Welcome', html: '<p>Hi</p>' },
        { id: 'nudge', type: 'whatsapp', template: { name: 'nudge', language: { code: 'en' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '{{ contact.firstName }}' }] }] } },
      ],
    });
    await card(1).getByRole('button', { name: 'Edit step 1' }).click();
    const email = card(1);
    expect(await email.getByRole('textbox', { name: 'Subject', exact: true }).count()).to.equal(1);
    await email.getByRole('button', { name: 'Open the editor with a live preview' }).click();
    const html = email.getByRole('textbox', { name: 'HTML', exact: true });
    // The editor's chunk has loaded: its Variables are listed.
    await email.getByRole('heading', { name: 'Variables' }).waitFor();
    // One Subject, one HTML, one plain-text field: the editor's.
    expect(await email.getByRole('textbox', { name: 'Subject', exact: true }).count()).to.equal(1);
    expect(await email.getByRole('textbox', { name: 'HTML', exact: true }).count()).to.equal(1);
    expect(await email.getByRole('textbox', { name: /^(Text \(optional\)|Plain text)$/ }).count()).to.equal(1);
    expect(await email.getByRole('textbox', { name: 'Subject', exact: true }).getAttribute('contenteditable')).to.equal('true');
    // The fields that are no template stay.
    await email.getByLabel('From (optional)').waitFor();
    await email.getByRole('textbox', { name: 'Subject', exact: true }).fill('Welcome aboard');
    await html.fill('<p>Hi {{ contact.firstName }}</p>');
    await html.scrollIntoViewIfNeeded();
    await lookAtBothWidths(page, 'builder-message-fields-once');

    await card(2).getByRole('button', { name: 'Edit step 2' }).click();
    const whatsapp = card(2);
    await whatsapp.getByRole('button', { name: 'Open the editor with a live preview' }).click();
    await whatsapp.getByRole('heading', { name: 'Variables' }).waitFor();
    expect(await whatsapp.getByRole('textbox', { name: 'Body parameter 1' }).count()).to.equal(1);
    await whatsapp.getByRole('textbox', { name: 'Body parameter 1' }).fill('{{ contact.firstName | default: "there" }}');

    await builder().getByRole('button', { name: 'Save steps' }).click();
    await builder().getByText('Saved as version 2.').waitFor();
    const saved = (await caller(tenant.key).sequences.get({ id: sequence.id })).sequence.steps;
    expect(saved[0]).to.include({ subject: 'Welcome aboard', html: '<p>Hi {{ contact.firstName }}</p>' });
    expect((saved[1] as { template: { components: Array<{ parameters: Array<{ text: string }> }> } }).template.components[0]!.parameters[0]!.text).to.equal('{{ contact.firstName | default: "there" }}');
  });
});
