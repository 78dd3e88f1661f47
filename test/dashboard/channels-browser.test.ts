import { expect } from 'chai';
import { select } from '../../src/db/sql/statements';
import { browserSuite, expectAccessible, serveDashboard, shoot, signInAt } from '../support/browser';
import { appWithChannels, channelSettings, dkimPrivateKey } from '../support/channels';
import { buildUser } from '../support/dashboard';
import { testDb } from '../support/db';

// Settings -> Channels in a real browser, at a desktop and a phone width: a bad SMTP URL comes
// back at its field, then the email sender is saved with a DKIM key and the page shows the TXT
// record to publish; the WhatsApp sender is saved and shows only its token's last 4 characters.

const TITLE = browserSuite('the dashboard\'s channels page in a browser');

describe(TITLE, function () {
  this.timeout(90_000);
  const dashboard = serveDashboard(() => appWithChannels(channelSettings({ emailMaxPerSecond: 50 })));

  for (const [label, viewport] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
    it(`sets up the email and WhatsApp senders and shows the DKIM record to publish (${label})`, async () => {
      const user = await buildUser();
      const page = await dashboard.newPage(viewport);
      await signInAt(page, `${dashboard.base}/dashboard/settings/channels`, user.email);
      await page.getByRole('heading', { name: 'Channels', level: 1 }).waitFor();
      await page.getByText('None: emails are written to the outbox folder').waitFor();

      const email = page.getByRole('region', { name: 'Email' });
      await email.getByLabel('From').fill('news@shop.example');
      await email.getByLabel('SMTP relay URL').fill('https://smtp.shop.example');
      await email.getByRole('button', { name: 'Save email sender' }).click();
      await email.getByText('must start with smtp:// or smtps://').waitFor();
      await shoot(page, `channels-error-${label}`);

      await email.getByLabel('SMTP relay URL').fill('smtps://news:browser-pass-3@smtp.shop.example:465');
      await email.getByLabel('DKIM domain').fill('shop.example');
      await email.getByLabel('DKIM selector').fill('s1');
      await email.getByLabel('DKIM private key (PEM)').fill(dkimPrivateKey());
      await email.getByLabel('Emails per second').fill('20');
      await email.getByRole('button', { name: 'Save email sender' }).click();
      await email.getByText('Email sender saved.').waitFor();
      await email.getByText('s1._domainkey.shop.example').waitFor();
      await email.getByText(/^v=DKIM1; k=rsa; p=/).waitFor();
      await email.getByText('smtp.shop.example:465 (this account’s relay)').waitFor();
      expect(await email.getByLabel('SMTP relay URL').inputValue()).to.equal('');
      expect(await email.getByLabel('DKIM private key (PEM)').inputValue()).to.equal('');

      const whatsapp = page.getByRole('region', { name: 'WhatsApp' });
      await whatsapp.getByLabel('Phone number ID').fill('106540352242922');
      await whatsapp.getByLabel('Access token').fill('EAAGbrowsertoken0000x7Kq');
      await whatsapp.getByRole('button', { name: 'Save WhatsApp sender' }).click();
      await whatsapp.getByText('Set up: token ending in x7Kq.').waitFor();
      expect(await whatsapp.getByLabel('Opt-out keywords').inputValue()).to.equal('STOP, UNSUBSCRIBE, ARRET, BAJA, PARAR, STOPP');
      await whatsapp.getByLabel('Opt-out keywords').fill('STOP, !!!');
      await whatsapp.getByRole('button', { name: 'Save WhatsApp sender' }).click();
      await whatsapp.getByText('must contain a letter or a digit').waitFor();
      await whatsapp.getByLabel('Opt-out keywords').fill('STOP, STOP_PROMOTIONS');
      await whatsapp.getByLabel('Webhook app secret').fill('browser-app-secret-9');
      await whatsapp.getByRole('button', { name: 'Save WhatsApp sender' }).click();
      await whatsapp.getByText('WhatsApp sender saved.').waitFor();
      expect(await whatsapp.getByLabel('Webhook app secret').inputValue()).to.equal('');
      expect(await whatsapp.getByLabel('Webhook app secret').getAttribute('placeholder')).to.equal('Stored: leave empty to keep');
      const [wa] = await select<Record<string, unknown>>(testDb(), 'SELECT opt_out_keywords, app_secret_secret FROM whatsapp_channels', []);
      expect(JSON.parse(String(wa!.opt_out_keywords))).to.deep.equal(['STOP', 'STOP_PROMOTIONS']);
      expect(String(wa!.app_secret_secret)).to.match(/^v1\./);
      expect(await page.content()).not.to.contain('browser-app-secret-9');
      await expectAccessible(page, `channels page (${label})`);
      await shoot(page, `channels-${label}`);

      // What a person saw was stored, encrypted.
      const [row] = await select<Record<string, unknown>>(testDb(), 'SELECT * FROM email_channels', []);
      expect(row).to.include({ from_address: 'news@shop.example', smtp_host: 'smtp.shop.example:465', dkim_selector: 's1', max_per_second: 20 });
      expect(JSON.stringify(row)).not.to.contain('browser-pass-3');
      expect(await page.content()).not.to.contain('browser-pass-3');
    });
  }
});
