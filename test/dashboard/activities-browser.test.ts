import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { silentLogger } from '../support/app';
import { browserSuite, lookAtBothWidths, serveDashboard, signInAt } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildApiKey, buildContact } from '../support/factories';

// The contact page's Activities panel in a real browser: a shop posts what a contact did over
// REST (one by one and in a batch, a retry among them), and the contact's page lists it, newest
// first, with its properties; a contact with none says how to record some. Axe and screenshots
// at 1280x800 and 390x844 (test/support/browser.ts).

describe(browserSuite('the contact page\'s activities in a browser'), function () {
  this.timeout(120_000);
  const dashboard = serveDashboard(() =>
    createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger }),
  );
  let page: Page;
  beforeEach(async () => (page = await dashboard.newPage()));

  const post = (key: string, path: string, body: unknown) =>
    fetch(`${dashboard.base}/api/v1${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('shows what a shop posted about the contact, newest first, and says how to record some when there is none', async () => {
    const user = await buildUser();
    const key = (await buildApiKey(user.accountId)).key;
    const quiet = await buildContact(user.accountId, { email: 'quiet@example.com' });
    const hour = 60 * 60 * 1000;
    const at = (hoursAgo: number) => new Date(Date.now() - hoursAgo * hour).toISOString();
    const first = await post(key, '/activities', {
      contact: { email: 'lin@example.com' },
      name: 'cart_abandoned',
      id: 'cart-77',
      occurredAt: at(3),
      properties: { cartId: '77', items: [{ sku: 'TEA-1', qty: 2 }], total: 18.5, note: 'a long note that has to wrap inside its cell on a phone rather than widen the page' },
    });
    expect(first.status).to.equal(202);
    const { activity } = (await first.json()) as { activity: { contactId: string } };
    const batch = await post(key, '/activities/batch', {
      activities: [
        { contact: { id: activity.contactId }, name: 'page_viewed', occurredAt: at(5), properties: { path: '/pricing' } },
        { contact: { email: 'LIN@example.com' }, name: 'checkout_completed', id: 'order-1042', occurredAt: at(1), properties: { cartId: '77' } },
        // The first one again, as a retrying sender would: a duplicate, not a second row.
        { contact: { email: 'lin@example.com' }, name: 'cart_abandoned', id: 'cart-77', properties: { total: 18.5, cartId: '77', items: [{ qty: 2, sku: 'TEA-1' }], note: 'a long note that has to wrap inside its cell on a phone rather than widen the page' } },
      ],
    });
    expect(batch.status).to.equal(202);
    expect(((await batch.json()) as { summary: unknown }).summary).to.deep.equal({ total: 3, accepted: 2, duplicates: 1 });

    await signInAt(page, `${dashboard.base}/dashboard`, user.email);
    await page.getByRole('link', { name: 'Contacts' }).first().click();
    await page.getByRole('link', { name: 'lin@example.com' }).click();
    const panel = page.getByRole('region', { name: 'Activities' });
    const table = panel.getByRole('table', { name: 'Activities of this contact, newest first' });
    await table.getByRole('row', { name: /checkout_completed/ }).waitFor();
    const names = await table.locator('tbody th').allInnerTexts();
    expect(names).to.deep.equal(['checkout_completed', 'cart_abandoned', 'page_viewed']);
    await table.getByRole('row', { name: /cart_abandoned/ }).getByText('"sku":"TEA-1"', { exact: false }).waitFor();
    await table.getByRole('row', { name: /checkout_completed/ }).getByText('order-1042').waitFor();
    await lookAtBothWidths(page, 'contact-activities');

    await page.goto(`${dashboard.base}/dashboard/contacts/${quiet.id}`);
    await page.getByRole('region', { name: 'Activities' }).getByText('No activities yet').waitFor();
  });
});
