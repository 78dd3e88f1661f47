import { expect } from 'chai';
import { withTransaction } from '../../src/db/sql/transaction';
import { select } from '../../src/db/sql/statements';
import { pauseChannels } from '../../src/services/channels/channel-pauses';
import { createSequence } from '../../src/services/sequences/sequence-admin';
import { browserSuite, expectAccessible, serveDashboard, shoot, signInAt } from '../support/browser';
import { appWithChannels, channelSettings } from '../support/channels';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';

// A paused channel in a real browser (docs/channels.md "What pauses a channel, and how it
// resumes"): the banner on Settings -> Channels and on the sequence page says what failed, in
// our words with its code, and how it resumes; saving the email sender on the page resumes it
// and the banner goes. The pauses are recorded as the engine records them (pauseChannels).

const TITLE = browserSuite('the dashboard\'s paused-channel banners in a browser');

describe(TITLE, function () {
  this.timeout(90_000);
  const dashboard = serveDashboard(() => appWithChannels(channelSettings()));

  for (const [label, viewport] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
    it(`shows a paused channel and a paused step, and saving the sender resumes it (${label})`, async () => {
      const user = await buildUser();
      const sequence = await createSequence(testDb(), {
        accountId: user.accountId,
        name: 'Welcome',
        status: 'active',
        steps: [{ id: 'chat', type: 'whatsapp', template: { name: 'no_such_template', language: { code: 'en_US' } } }],
      } as never);
      const now = new Date();
      await withTransaction(testDb(), (transaction) =>
        pauseChannels(
          testDb(),
          [
            { accountId: user.accountId, channel: 'email', step: null, code: 'smtp_auth_failed', reason: 'smtp auth failed (535 5.7.8)' },
            { accountId: user.accountId, channel: 'whatsapp', step: { sequenceId: sequence.id, stepId: 'chat' }, code: 'whatsapp_template_error', reason: "Graph refused the step's template (132001)" },
          ],
          { now },
          transaction,
        ),
      );
      const page = await dashboard.newPage(viewport);
      await signInAt(page, `${dashboard.base}/dashboard/settings/channels`, user.email);
      await page.getByRole('heading', { name: 'Channels', level: 1 }).waitFor();
      const emailBanner = page.getByRole('alert').filter({ hasText: 'Email sending is paused' });
      await emailBanner.waitFor();
      expect(await emailBanner.innerText()).to.contain('smtp auth failed (535 5.7.8)');
      expect(await emailBanner.innerText()).to.contain('once a login test succeeds');
      const stepBanner = page.getByRole('alert').filter({ hasText: 'WhatsApp step “chat” is paused' });
      await stepBanner.waitFor();
      expect(await stepBanner.innerText()).to.contain("Graph refused the step's template (132001)");
      await expectAccessible(page, `channels page with pauses (${label})`);
      await shoot(page, `channel-paused-${label}`);

      await stepBanner.getByRole('link', { name: 'its sequence' }).click();
      await page.getByRole('heading', { name: 'Welcome', level: 1 }).waitFor();
      await page.getByText('Welcome', { exact: true }).first().waitFor();
      await page.getByRole('alert').filter({ hasText: 'WhatsApp step “chat” is paused' }).waitFor();
      await page.getByRole('alert').filter({ hasText: 'Email sending is paused' }).waitFor();
      await expectAccessible(page, `sequence page with pauses (${label})`);
      await shoot(page, `channel-paused-sequence-${label}`);

      await page.getByRole('alert').filter({ hasText: 'Email sending is paused' }).getByRole('link', { name: 'in Settings → Channels' }).click();
      const email = page.getByRole('region', { name: 'Email' });
      await email.getByLabel('From').fill('news@shop.example');
      await email.getByLabel('SMTP relay URL').fill('smtp://news:the-new-password@smtp.shop.example:587');
      await email.getByRole('button', { name: 'Save email sender' }).click();
      await email.getByText('Email sender saved.').waitFor();
      await page.getByRole('alert').filter({ hasText: 'Email sending is paused' }).waitFor({ state: 'detached' });
      expect(await page.getByRole('alert').filter({ hasText: 'WhatsApp step “chat” is paused' }).count()).to.equal(1);
      await shoot(page, `channel-resumed-${label}`);
      const events = await select<{ type: string }>(testDb(), "SELECT type FROM events WHERE account_id = ? AND type = 'channel.resumed'", [user.accountId]);
      expect(events).to.have.length(1);
    });
  }
});
