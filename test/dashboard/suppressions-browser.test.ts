import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { createApp } from '../../src/app';
import { select } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import { addSuppressions } from '../../src/services/suppressions/suppression-store';
import { caller, silentLogger } from '../support/app';
import { browserSuite, lookAtBothWidths, serveDashboard, signInAt } from '../support/browser';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';
import { buildApiKey, buildContact } from '../support/factories';
import { engineAt } from '../services/engine/support';

// Audience -> Suppressions in a real browser: a list with a bounce already on it; search by
// address and filter by reason; add an address (a bad one first: the service's words at the
// field); the contact's next email is then skipped `suppressed`, as its run's timeline shows;
// remove one, after a confirmation that can be cancelled. Axe and screenshots at 1280x800 and
// 390x844 (test/support/browser.ts).

describe(browserSuite('the dashboard\'s suppressions page in a browser'), function () {
  this.timeout(120_000);
  const dashboard = serveDashboard(() =>
    createApp({ db: testDb(), config: { rateLimitPerMinute: 1_000_000, authFailureLimitPerMinute: 1_000_000 }, logger: silentLogger }),
  );
  let page: Page;
  beforeEach(async () => (page = await dashboard.newPage()));

  const rowsOf = (accountId: string) =>
    select<{ channel: string; address: string; reason: string; source: string }>(testDb(), 'SELECT channel, address, reason, source FROM suppressions WHERE account_id = ? ORDER BY address', [accountId]);

  it('searches and filters the list, adds an address whose next email is then skipped, and removes one after confirming', async () => {
    const user = await buildUser();
    const key = (await buildApiKey(user.accountId)).key;
    // What the engine and the WhatsApp webhook would have added.
    await withTransaction(testDb(), (t) =>
      addSuppressions(
        testDb(),
        user.accountId,
        [
          { channel: 'email', address: 'gone@mail.example', reason: 'hard_bounce', source: 'message:0193a1b2-0000-7000-8000-000000000001' },
          { channel: 'whatsapp', address: '+4915112855001', reason: 'opt_out', source: 'provider:whatsapp.stop' },
        ],
        { now: new Date(Date.now() - 60_000) },
        t,
      ),
    );

    await signInAt(page, `${dashboard.base}/dashboard`, user.email);
    await page.getByRole('link', { name: 'Suppressions' }).click();
    await page.getByRole('heading', { name: 'Suppressions', level: 1 }).waitFor();
    const table = page.getByRole('table', { name: 'Suppressions, newest first' });
    await table.getByRole('row', { name: /gone@mail\.example/ }).getByText('Hard bounce').waitFor();
    await table.getByRole('row', { name: /\+4915112855001/ }).getByText('Opt-out').waitFor();
    await lookAtBothWidths(page, 'suppressions');

    // Search by address, written as a person might: found in its stored form.
    await page.getByLabel('Address').fill('GONE@Mail.Example');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/address=GONE%40Mail\.Example/);
    // The row was there before the search: wait for the filtered page, not for the row.
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    await table.getByRole('row', { name: /gone@mail\.example/ }).waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Reason').selectOption('opt_out');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/reason=opt_out/);
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    expect(await table.locator('tbody tr').innerText()).to.contain('+4915112855001');
    await page.getByLabel('Channel').selectOption('email');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No suppressions match these filters.').waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await table.getByRole('row', { name: /gone@mail\.example/ }).waitFor();

    // Add: the service's own rule comes back at the field, then the address is added.
    await page.getByRole('button', { name: 'Add suppression' }).click();
    const add = page.getByRole('dialog', { name: 'Add a suppression' });
    await add.getByLabel('Address').fill('ada@');
    await add.getByRole('button', { name: 'Add suppression' }).click();
    await add.getByText('Invalid email address').waitFor();
    await lookAtBothWidths(page, 'suppression-add-dialog');
    await add.getByLabel('Address').fill('Ada@Example.com');
    await add.getByLabel('Reason').selectOption('complaint');
    await add.getByRole('button', { name: 'Add suppression' }).click();
    await page.getByRole('status').getByText('Ada@Example.com is suppressed on email.').waitFor();
    await table.getByRole('row', { name: /ada@example\.com/ }).getByText('Complaint').waitFor();
    expect((await rowsOf(user.accountId)).find((row) => row.address === 'ada@example.com')).to.deep.equal({ channel: 'email', address: 'ada@example.com', reason: 'complaint', source: `user:${user.id}` });

    // The contact with that address stays enrollable; its email step is skipped when it goes.
    const contact = await buildContact(user.accountId, { email: 'ada@example.com', firstName: 'Ada' });
    const { sequence } = await caller(key).sequences.create({ name: 'Welcome', status: 'active', steps: [{ id: 'hello', type: 'email', subject: 'Hi', html: '<p>Hi</p>' }, { id: 'done', type: 'tag', add: ['welcomed'] }] } as never);
    await caller(key).sequences.enroll({ id: sequence.id, contactIds: [contact.id] });
    const { engine } = engineAt();
    await engine.runUntilIdle();
    const [run] = (await caller(key).sequences.runs({ id: sequence.id })).runs;
    await page.goto(`${dashboard.base}/dashboard/runs/${run!.id}`);
    await page.getByRole('heading', { name: /Run Completed/ }).waitFor();
    const hello = page.locator('.event').filter({ has: page.locator('.step-id', { hasText: /^hello$/ }) });
    expect(await hello.innerText()).to.match(/Skipped/i);
    expect(await hello.innerText()).to.match(/suppressed/);
    await lookAtBothWidths(page, 'suppression-run-timeline');

    // Remove, asked first: Cancel keeps it; Remove lifts it.
    await page.goto(`${dashboard.base}/dashboard/suppressions`);
    const row = table.getByRole('row', { name: /gone@mail\.example/ });
    await row.getByRole('button', { name: 'Remove gone@mail.example (Email)' }).click();
    const confirm = page.getByRole('dialog', { name: 'Remove gone@mail.example from the suppression list?' });
    expect(await confirm.innerText()).to.contain('it was added for a hard bounce');
    await lookAtBothWidths(page, 'suppression-remove-dialog');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect((await rowsOf(user.accountId)).map((r) => r.address)).to.include('gone@mail.example');
    await row.getByRole('button', { name: 'Remove gone@mail.example (Email)' }).click();
    await confirm.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('status').getByText('gone@mail.example is no longer suppressed on email.').waitFor();
    await row.waitFor({ state: 'detached' });
    expect((await rowsOf(user.accountId)).map((r) => r.address)).to.deep.equal(['+4915112855001', 'ada@example.com']);
    await lookAtBothWidths(page, 'suppressions-after-remove');
  });
});
