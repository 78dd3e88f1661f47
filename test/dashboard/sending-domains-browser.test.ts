import { expect } from 'chai';
import { select } from '../../src/db/sql/statements';
import type { TxtResolver } from '../../src/services/channels/txt-lookup';
import { browserSuite, lookAtBothWidths, serveDashboard, signInAt } from '../support/browser';
import { appWithChannels, channelSettings } from '../support/channels';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';

// Settings -> Channels -> Sending domains in a real browser, on a server with a shared relay:
// a From in a domain that is not verified is refused at its field; the person adds the domain,
// publishes the record it shows (the test's DNS zone), presses Verify, sees it verified, saves
// the From, and deletes the domain after confirming.

const TITLE = browserSuite('the dashboard\'s sending domains in a browser');

describe(TITLE, function () {
  this.timeout(90_000);
  const zone = new Map<string, string[]>();
  const resolveTxt: TxtResolver = async (name) => {
    const records = zone.get(name);
    if (!records) throw Object.assign(new Error(`queryTxt ENODATA ${name}`), { code: 'ENODATA' });
    return records.map((record) => [record]);
  };

  const dashboard = serveDashboard(() =>
    appWithChannels(channelSettings({ smtpUrl: 'smtp://relay.svc.example:587', emailFrom: 'Svc <news@svc.example>', resolveTxt, txtTimeoutMs: 200 })),
  );

  it('adds a domain, shows the records to publish, verifies it with the Verify button, then sends From it and deletes it', async () => {
    const user = await buildUser();
    const page = await dashboard.newPage();
    await signInAt(page, `${dashboard.base}/dashboard/settings/channels`, user.email);
    await page.getByRole('heading', { name: 'Channels', level: 1 }).waitFor();

    const email = page.getByRole('region', { name: 'Email' });
    await email.getByLabel('From').fill('news@shop.example');
    await email.getByRole('button', { name: 'Save email sender' }).click();
    await email.getByText('shop.example is not a verified sending domain of the account', { exact: false }).first().waitFor();

    const domains = page.getByRole('region', { name: 'Sending domains' });
    await domains.getByText("The server's own domains (svc.example) are verified for every account.", { exact: false }).waitFor();
    await domains.getByLabel('Domain to send from').fill('Shop.Example');
    await domains.getByRole('button', { name: 'Add domain' }).click();
    const card = domains.getByRole('article', { name: /shop\.example/ });
    await card.getByText('Pending').waitFor();
    await card.getByText('_svc-verify.shop.example').waitFor();
    const [row] = await select<{ token: string }>(testDb(), "SELECT token FROM email_domains WHERE domain = 'shop.example'", []);
    await card.getByText(row!.token).waitFor();
    // Looked up at once: nothing published yet.
    await card.getByLabel('Verification (proves the domain is yours)').getByText('Not found').waitFor();
    await lookAtBothWidths(page, 'sending-domains-pending');

    // Published at the DNS provider, with an SPF record for the relay.
    zone.set('_svc-verify.shop.example', [row!.token]);
    zone.set('shop.example', ['v=spf1 a:relay.svc.example ~all']);
    await card.getByRole('button', { name: 'Verify shop.example' }).click();
    await card.getByText('Verified', { exact: true }).waitFor();
    const verification = card.getByRole('definition').filter({ hasText: row!.token }).first();
    await verification.waitFor();
    await card.getByLabel('Verification (proves the domain is yours)').getByText('Found').waitFor();
    await card.getByLabel('SPF (the relay that may send)').getByText('Found').waitFor();
    await card.getByLabel('DMARC (the policy)').getByText('Not found').waitFor();
    await lookAtBothWidths(page, 'sending-domains-verified');

    await email.getByRole('button', { name: 'Save email sender' }).click();
    await email.getByText('Email sender saved.').waitFor();
    const [channel] = await select<{ from_address: string }>(testDb(), 'SELECT from_address FROM email_channels', []);
    expect(channel!.from_address).to.equal('news@shop.example');

    await card.getByRole('button', { name: 'Delete shop.example' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete shop.example?' });
    await dialog.getByRole('button', { name: 'Delete domain' }).click();
    await domains.getByText('No sending domain yet.').waitFor();
    expect(await select(testDb(), "SELECT id FROM email_domains WHERE domain = 'shop.example'", [])).to.deep.equal([]);
  });
});
