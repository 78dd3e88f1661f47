import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { SmtpTransports } from '../../src/services/messages/smtp-transports';
import { caller, silentLogger } from '../support/app';
import { browserSuite, lookAtBothWidths, serveDashboard, signInHere } from '../support/browser';
import { channelSettings } from '../support/channels';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { startSmtpServer } from '../support/smtp-server';

// The message editor in a real browser (issue 29, "Message editor"), on a sequence's email step:
// a contact found by the start of their email, the step previewed for them from the service's
// preview as it is edited, a variable (one of the contact's custom fields) inserted where the
// cursor is, the html at a phone's width, and a template error shown at its line. Checked with
// axe and photographed at 1280x800 and 390x844.

const TITLE = browserSuite('the message editor in the dashboard');

const HTML = ['<h1>Hello {{ contact.firstName }}</h1>', '<p>Your plan: </p>', '<p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>'].join('\n');

describe(TITLE, function () {
  this.timeout(120_000);
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let transports: SmtpTransports;
  // A secrets key (previews carry the signed unsubscribe link) and SMTP_URL: a real relay.
  const dashboard = serveDashboard(async () => {
    smtp = await startSmtpServer();
    transports = new SmtpTransports({ connectionMs: 5_000, greetingMs: 5_000, socketMs: 5_000 });
    return createApp({
      db: testDb(),
      config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 },
      logger: silentLogger,
      channels: channelSettings({ smtpUrl: smtp.url, emailFrom: 'news@shop.example' }),
      testSends: { transports, outboxDir: mkdtempSync(path.join(tmpdir(), 'svc-editor-outbox-')) },
    });
  });
  after(async () => {
    transports?.close();
    await smtp?.close();
  });
  let page: Page;
  beforeEach(async () => (page = await dashboard.newPage()));

  const frame = () => page.frameLocator('iframe.preview-frame');

  it('previews an email step for a contact found by email, inserts a variable at the cursor, and shows a template error at its line', async () => {
    const tenant = await buildTenant();
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Welcome',
      status: 'active',
      steps: [
        { id: 'settle', type: 'wait', duration: 'PT1H' },
        { id: 'welcome', type: 'email', subject: 'Welcome, {{ contact.firstName }}', html: HTML },
      ],
    });
    const ada = await buildContact(tenant.accountId, { email: 'ada@example.com', firstName: 'Ada', customFields: { plan: 'pro' } });
    await buildContact(tenant.accountId, { email: 'adam@example.com', firstName: 'Adam' });
    const user = await buildUser(tenant.accountId);

    await page.goto(`${dashboard.base}/dashboard/sequences/${sequence.id}/messages/welcome`);
    await signInHere(page, user.email);
    const html = page.getByRole('textbox', { name: 'HTML' });
    await html.waitFor();
    expect(await html.innerText()).to.equal(HTML);
    // Liquid is highlighted: the editor marks up the template's tags, not one run of text.
    expect(await html.locator('span').count()).to.be.greaterThan(3);

    await page.getByLabel('Preview for the contact').fill('ada');
    const matches = page.getByRole('list', { name: 'Matching contacts' });
    await matches.getByRole('button', { name: 'adam@example.com' }).waitFor();
    await matches.getByRole('button', { name: 'ada@example.com', exact: true }).click();
    await page.getByTestId('preview-subject').getByText('Welcome, Ada').waitFor();
    await frame().getByRole('heading', { name: 'Hello Ada' }).waitFor();
    expect(await page.locator('iframe.preview-frame').getAttribute('sandbox')).to.equal('');

    // The cursor after "Your plan: " (line 2), then a click on the contact's custom field.
    await html.locator('.cm-line').nth(1).click();
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.getByRole('button', { name: /^contact\.customFields\.plan/ }).click();
    expect((await html.innerText()).split('\n')[1]).to.equal('<p>Your plan: {{ contact.customFields.plan }}</p>');
    await frame().getByText('Your plan: pro').waitFor();

    await page.getByRole('radio', { name: /Phone/ }).check();
    expect(await page.locator('iframe.preview-frame').evaluate((el) => el.getBoundingClientRect().width)).to.equal(375);
    await lookAtBothWidths(page, 'message-editor-preview');

    // Line 3 opens an if it never closes: the service's 400 names the line, the editor marks it.
    await html.fill(['<h1>Hello</h1>', '<p>Plan</p>', '{% if contact.firstName %}<p>Hi</p>'].join('\n'));
    const alert = page.getByRole('alert');
    await alert.getByText('Line 3:').waitFor();
    expect(await alert.innerText()).to.match(/^Line 3: html does not parse: line 3, column 1: tag .*not closed/);
    expect(await html.locator('.cm-template-error').getAttribute('data-error-line')).to.equal('3');
    expect(await html.locator('.cm-template-error').innerText()).to.equal('{% if contact.firstName %}<p>Hi</p>');
    // The last preview that rendered stays.
    await frame().getByText('Your plan: pro').waitFor();
    // Chromium paints a frame below the fold only once it has been in view.
    await page.locator('iframe.preview-frame').scrollIntoViewIfNeeded();
    await html.scrollIntoViewIfNeeded();
    await lookAtBothWidths(page, 'message-editor-error');

    // Mended: the error goes, the preview follows.
    await html.fill(['<h1>Hello</h1>', '<p>Plan</p>', '{% if contact.firstName %}<p>Hi {{ contact.firstName }}</p>{% endif %}'].join('\n'));
    await frame().getByText('Hi Ada').waitFor();
    expect(await page.getByRole('alert').count()).to.equal(0);
    expect(await html.locator('.cm-template-error').count()).to.equal(0);
    // Nothing was saved from this page.
    const saved = (await caller(tenant.key).sequences.get({ id: sequence.id })).sequence.steps[1] as { html: string };
    expect(saved.html).to.equal(HTML);

    // Send a test: the step as edited, for Ada, to the address typed, through the relay.
    await page.getByLabel('Send to').fill('me@agency.example');
    await page.getByRole('button', { name: 'Send a test' }).click();
    await page.getByRole('status').getByText(/^Test sent to me@agency\.example: “Welcome, Ada”/).waitFor();
    expect(smtp.received).to.have.length(1);
    expect(smtp.received[0]!.envelope.to).to.deep.equal(['me@agency.example']);
    expect(smtp.received[0]!.parsed.subject).to.equal('Welcome, Ada');
    expect(smtp.received[0]!.parsed.html).to.include('Hi Ada');
    // A test, not a message of Ada's: her message list stays empty.
    expect((await caller(tenant.key).contacts.messages({ id: ada.id })).messages).to.deep.equal([]);
    await page.getByRole('button', { name: 'Send a test' }).scrollIntoViewIfNeeded();
    await lookAtBothWidths(page, 'message-editor-send-test');
  });
});
