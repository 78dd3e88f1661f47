import { expect } from 'chai';
import { select } from '../../src/db/sql/statements';
import { browserSuite, lookAtBothWidths, serveDashboard, signInAt } from '../support/browser';
import { appWithChannels, channelSettings } from '../support/channels';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';

// Settings -> Channels, the email sender's tracking and frequency cap in a real browser (issue
// 37): a bad cap comes back at its field with nothing stored; then opens and clicks tracked and
// a cap of 2 emails a day that skips are saved, and a reload shows them as stored, in words too.

describe(browserSuite("the channels page's tracking and frequency cap"), function () {
  this.timeout(90_000);
  const dashboard = serveDashboard(() => appWithChannels(channelSettings()));

  it('refuses a cap of 0 at its field, then saves tracking and a cap that a reload shows as stored', async () => {
    const user = await buildUser();
    const page = await dashboard.newPage();
    await signInAt(page, `${dashboard.base}/dashboard/settings/channels`, user.email);
    const email = page.getByRole('region', { name: 'Email' });
    await email.getByLabel('From').fill('news@shop.example');
    await email.getByLabel('Track opens (a 1x1 image)').check();
    await email.getByLabel('Track clicks (links rewritten').check();
    await email.getByLabel('Cap marketing emails per contact').check();
    await email.getByLabel('Most emails per window').fill('0');
    await email.getByRole('button', { name: 'Save email sender' }).click();
    const max = email.getByLabel('Most emails per window');
    await email.getByText('must be at least 1').waitFor();
    expect(await max.getAttribute('aria-invalid')).to.equal('true');
    expect(await select(testDb(), 'SELECT * FROM email_channels', [])).to.have.length(0);
    await lookAtBothWidths(page, 'channels-cap-error');

    await max.fill('2');
    await email.getByLabel('Window (ISO 8601 duration)').fill('P1D');
    await email.getByLabel('Skip: the step is skipped').check();
    await email.getByRole('button', { name: 'Save email sender' }).click();
    await email.getByText('Email sender saved.').waitFor();

    await page.reload();
    const again = page.getByRole('region', { name: 'Email' });
    await again.getByLabel('From').waitFor();
    expect(await again.getByLabel('Track opens (a 1x1 image)').isChecked()).to.equal(true);
    expect(await again.getByLabel('Track clicks (links rewritten').isChecked()).to.equal(true);
    expect(await again.getByLabel('Cap marketing emails per contact').isChecked()).to.equal(true);
    expect(await again.getByLabel('Most emails per window').inputValue()).to.equal('2');
    expect(await again.getByLabel('Window (ISO 8601 duration)').inputValue()).to.equal('P1D');
    expect(await again.getByLabel('Skip: the step is skipped').isChecked()).to.equal(true);
    await again.getByText(/In force: At most 2 marketing emails per contact per 1 day; a capped step is skipped\./).waitFor();
    await lookAtBothWidths(page, 'channels-cap-saved');
  });
});
