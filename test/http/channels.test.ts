import { generateKeyPairSync } from 'node:crypto';
import { expect } from 'chai';
import { select } from '../../src/db/sql/statements';
import { resolveEmailSender, resolveWhatsAppSender } from '../../src/services/channels/senders';
import { appWithChannels, channelSettings, channelsApi, dkimPrivateKey, verifiedSendingDomain } from '../support/channels';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';
import request from 'supertest';

// GET and PUT /channels/email and /channels/whatsapp (docs/channels.md).

const SMTP_URL = 'smtps://news%40shop.example:pa55-word-9Xq@smtp.shop.example:465';
const TOKEN = 'EAAGm0PX4ZCpsBAKzZBQ7Zx1Zx2secretTokenTail9Qz';

async function rawRow(table: string, accountId: string) {
  const [row] = await select<Record<string, unknown>>(testDb(), `SELECT * FROM ${table} WHERE account_id = ?`, [accountId]);
  return row;
}

describe('channel settings over REST', () => {
  const settings = channelSettings({ smtpUrl: 'smtp://relay.internal:2525', emailFrom: 'server@svc.example', emailMaxPerSecond: 50, whatsappMaxPerSecond: 20 });
  const api = channelsApi(settings);

  describe('email', () => {
    it('answers the server\'s defaults, saying which they are, for an account that set nothing', async () => {
      const { key } = await buildTenant();
      const got = await api(key).get('/channels/email');
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal({
        channel: {
          from: 'server@svc.example',
          replyTo: null,
          smtp: { configured: true, host: 'relay.internal:2525', source: 'server' },
          dkim: null,
          maxPerSecond: 50,
          bounceDomain: null,
          tracking: { opens: false, clicks: false },
          frequencyCap: null,
        },
      });
      const none = await channelsApi(channelSettings())(key).get('/channels/email');
      expect(none.body.channel).to.deep.include({ from: null, smtp: { configured: false, host: null, source: null }, maxPerSecond: 100 });
    });

    it('stores the relay and the DKIM key encrypted, answers neither, and shows the DNS record to publish', async () => {
      const { key, accountId } = await buildTenant();
      const privateKey = dkimPrivateKey();
      const put = await api(key)
        .put('/channels/email')
        .send({ from: 'news@shop.example', replyTo: 'help@shop.example', smtpUrl: SMTP_URL, dkim: { domain: 'Shop.Example', selector: 's1', privateKey }, maxPerSecond: 10 });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(put.body.channel).to.deep.include({ from: 'news@shop.example', replyTo: 'help@shop.example', maxPerSecond: 10 });
      expect(put.body.channel.smtp).to.deep.equal({ configured: true, host: 'smtp.shop.example:465', source: 'account' });
      expect(put.body.channel.dkim.domain).to.equal('shop.example');
      expect(put.body.channel.dkim.dnsRecord.name).to.equal('s1._domainkey.shop.example');
      expect(put.body.channel.dkim.dnsRecord.type).to.equal('TXT');
      const p = /^v=DKIM1; k=rsa; p=([A-Za-z0-9+/=]+)$/.exec(put.body.channel.dkim.dnsRecord.value)?.[1];
      expect(p, 'p= of the record').to.be.a('string');
      const { publicKey } = await import('node:crypto').then((c) => ({ publicKey: c.createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64') }));
      expect(p).to.equal(publicKey);

      const got = await api(key).get('/channels/email');
      expect(got.body).to.deep.equal(put.body);
      for (const text of [JSON.stringify(put.body), JSON.stringify(got.body)]) {
        expect(text).not.to.contain('pa55-word');
        expect(text).not.to.contain('PRIVATE KEY');
      }

      const row = await rawRow('email_channels', accountId);
      const stored = JSON.stringify(row);
      expect(stored).not.to.contain('pa55-word');
      expect(stored).not.to.contain('news%40shop.example');
      expect(stored).not.to.contain('PRIVATE KEY');
      expect(stored).not.to.contain(privateKey.split('\n')[1]);
      expect(row.smtp_url_secret).to.match(/^v1\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]+$/);
      expect(row.dkim_private_key_secret).to.match(/^v1\.[A-Za-z0-9_-]{8}\./);

      const sender = await resolveEmailSender(testDb(), accountId, settings);
      expect(sender).to.deep.equal({
        from: 'news@shop.example',
        replyTo: 'help@shop.example',
        smtpUrl: SMTP_URL,
        dkim: { domainName: 'shop.example', keySelector: 's1', privateKey },
        maxPerSecond: 10,
        bounceDomain: null,
        sharedRelay: false,
        verifiedDomains: ['svc.example'],
        tracking: { opens: false, clicks: false },
      });
    });

    it('turns open and click tracking on and off, each kept when a PUT leaves it out', async () => {
      const { key, accountId } = await buildTenant();
      const on = await api(key).put('/channels/email').send({ from: 'a@shop.example', smtpUrl: SMTP_URL, tracking: { opens: true, clicks: true } });
      expect(on.status, JSON.stringify(on.body)).to.equal(200);
      expect(on.body.channel.tracking).to.deep.equal({ opens: true, clicks: true });
      const kept = await api(key).put('/channels/email').send({ from: 'a@shop.example' });
      expect(kept.body.channel.tracking).to.deep.equal({ opens: true, clicks: true });
      const half = await api(key).put('/channels/email').send({ from: 'a@shop.example', tracking: { clicks: false } });
      expect(half.body.channel.tracking).to.deep.equal({ opens: true, clicks: false });
      expect((await api(key).get('/channels/email')).body.channel.tracking).to.deep.equal({ opens: true, clicks: false });
      expect((await resolveEmailSender(testDb(), accountId, settings)).tracking).to.deep.equal({ opens: true, clicks: false });
    });

    it('answers 400 naming tracking for tracking that is not an object, and tracking.<key> for another key, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const res = await api(key).put('/channels/email').send({ from: 'a@shop.example', smtpUrl: SMTP_URL, tracking: 'on' });
      expect(res.status).to.equal(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).to.deep.equal(['tracking']);
      const other = await api(key).put('/channels/email').send({ from: 'a@shop.example', smtpUrl: SMTP_URL, tracking: { pixels: true } });
      expect(other.status).to.equal(400);
      // The unknown key is named at its own path.
      expect(other.body.details.map((d: { path: string }) => d.path)).to.deep.equal(['tracking.pixels']);
      expect(other.body.details[0].message).to.match(/^Unknown field/);
      expect(await rawRow('email_channels', accountId)).to.equal(undefined);
    });

    it('keeps what a PUT leaves out, and clears what it sets to null', async () => {
      const { key, accountId } = await buildTenant();
      await api(key).put('/channels/email').send({ from: 'a@shop.example', replyTo: 'r@shop.example', smtpUrl: SMTP_URL, maxPerSecond: 5 }).expect(200);
      const kept = await api(key).put('/channels/email').send({ from: 'b@shop.example' });
      // Back on the server's relay below: From a verified domain only.
      await verifiedSendingDomain(accountId, 'shop.example', settings);
      expect(kept.body.channel).to.deep.include({ from: 'b@shop.example', replyTo: 'r@shop.example', maxPerSecond: 5 });
      expect(kept.body.channel.smtp.source).to.equal('account');
      expect((await resolveEmailSender(testDb(), accountId, settings)).smtpUrl).to.equal(SMTP_URL);

      const cleared = await api(key).put('/channels/email').send({ from: 'b@shop.example', replyTo: null, smtpUrl: null, maxPerSecond: null });
      expect(cleared.body.channel).to.deep.include({ replyTo: null, maxPerSecond: 50 });
      expect(cleared.body.channel.smtp).to.deep.equal({ configured: true, host: 'relay.internal:2525', source: 'server' });
      expect((await resolveEmailSender(testDb(), accountId, settings)).smtpUrl).to.equal('smtp://relay.internal:2525');
      expect((await rawRow('email_channels', accountId)).smtp_url_secret).to.equal(null);
    });

    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ['an SMTP URL that is not smtp:// or smtps://', { from: 'a@shop.example', smtpUrl: 'https://smtp.shop.example' }, 'smtpUrl'],
      ['an SMTP URL that is not a URL', { from: 'a@shop.example', smtpUrl: 'smtp.shop.example:587' }, 'smtpUrl'],
      ['a from that is not an email address', { from: 'Shop news' }, 'from'],
      ['no from', { replyTo: 'r@shop.example' }, 'from'],
      ['a replyTo that is not an email address', { from: 'a@shop.example', replyTo: 'nobody' }, 'replyTo'],
      ['a DKIM key that is not a key', { from: 'a@shop.example', dkim: { domain: 'shop.example', selector: 's1', privateKey: 'not a key' } }, 'dkim.privateKey'],
      ['a DKIM domain that is not a domain', { from: 'a@shop.example', dkim: { domain: 'shop example', selector: 's1', privateKey: 'x' } }, 'dkim.domain'],
      ['a maxPerSecond above the server\'s EMAIL_MAX_PER_SECOND', { from: 'a@shop.example', maxPerSecond: 51 }, 'maxPerSecond'],
      ['a maxPerSecond of 0', { from: 'a@shop.example', maxPerSecond: 0 }, 'maxPerSecond'],
    ];
    for (const [what, body, field] of refusals) {
      it(`answers 400 naming ${field} for ${what}, and writes nothing`, async () => {
        const { key, accountId } = await buildTenant();
        const res = await api(key).put('/channels/email').send(body);
        expect(res.status).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.details.map((d: { path: string }) => d.path)).to.include(field);
        expect(await rawRow('email_channels', accountId)).to.equal(undefined);
      });
    }

    it('answers 400 for a DKIM key that does not sign (an Ed25519 key, a 512-bit RSA key), and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const ed25519 = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      const small = generateKeyPairSync('rsa', { modulusLength: 512 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      for (const privateKey of [ed25519, small]) {
        const res = await api(key).put('/channels/email').send({ from: 'a@shop.example', dkim: { domain: 'shop.example', selector: 's1', privateKey } });
        expect(res.status).to.equal(400);
        expect(res.body.details).to.deep.equal([{ path: 'dkim.privateKey', message: res.body.details[0].message }]);
      }
      expect(await rawRow('email_channels', accountId)).to.equal(undefined);
    });

    it('without a secrets key (a server database without SECRETS_KEY) refuses to store a secret with 409 secrets_key_missing, and still saves the rest', async () => {
      const { key, accountId } = await buildTenant();
      const keyless = channelsApi(channelSettings({ secrets: null }));
      for (const body of [
        { from: 'a@shop.example', smtpUrl: SMTP_URL },
        { from: 'a@shop.example', dkim: { domain: 'shop.example', selector: 's1', privateKey: dkimPrivateKey() } },
      ]) {
        const res = await keyless(key).put('/channels/email').send(body);
        expect(res.status).to.equal(409);
        expect(res.body).to.include({ code: 'secrets_key_missing' });
        expect(res.body.error).to.contain('SECRETS_KEY');
        expect(await rawRow('email_channels', accountId)).to.equal(undefined);
      }
      const plain = await keyless(key).put('/channels/email').send({ from: 'a@shop.example', maxPerSecond: 3 });
      expect(plain.status).to.equal(200);
      expect(plain.body.channel.from).to.equal('a@shop.example');
    });

    it('keeps each account\'s settings to itself', async () => {
      const one = await buildTenant();
      const two = await buildTenant();
      await api(one.key).put('/channels/email').send({ from: 'one@shop.example', smtpUrl: SMTP_URL }).expect(200);
      const other = await api(two.key).get('/channels/email');
      expect(other.body.channel.from).to.equal('server@svc.example');
      expect(other.body.channel.smtp.source).to.equal('server');
    });

    it('a ciphertext moved into another account\'s row does not decrypt there', async () => {
      const one = await buildTenant();
      const two = await buildTenant();
      await api(one.key).put('/channels/email').send({ from: 'one@shop.example', smtpUrl: SMTP_URL }).expect(200);
      await api(two.key).put('/channels/email').send({ from: 'two@shop.example', smtpUrl: 'smtp://other.example' }).expect(200);
      const stolen = (await rawRow('email_channels', one.accountId)).smtp_url_secret;
      await testDb().sequelize.query('UPDATE email_channels SET smtp_url_secret = ? WHERE account_id = ?', { replacements: [stolen, two.accountId] });
      let failure: Error | undefined;
      try {
        await resolveEmailSender(testDb(), two.accountId, settings);
      } catch (error) {
        failure = error as Error;
      }
      expect(failure?.message).to.contain('does not decrypt');
      expect(failure?.message).not.to.contain('pa55');
    });
  });

  describe('whatsapp', () => {
    it('answers 200 with configured false for an account that set nothing', async () => {
      const { key, accountId } = await buildTenant();
      const got = await api(key).get('/channels/whatsapp');
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal({ channel: { configured: false, phoneNumberId: null, accessToken: { configured: false, last4: null }, maxPerSecond: 20, appSecret: { configured: false }, verifyToken: { configured: false }, optOutKeywords: ['STOP', 'UNSUBSCRIBE', 'ARRET', 'BAJA', 'PARAR', 'STOPP'], frequencyCap: null } });
      expect(await resolveWhatsAppSender(testDb(), accountId, settings)).to.deep.equal({
        phoneNumberId: null,
        accessToken: null,
        apiUrl: 'https://graph.facebook.com/v21.0',
        maxPerSecond: 20,
      });
    });

    it('stores the token encrypted, answers only its last 4 characters, and keeps it when a later PUT leaves it out', async () => {
      const { key, accountId } = await buildTenant();
      const put = await api(key).put('/channels/whatsapp').send({ phoneNumberId: '106540352242922', accessToken: TOKEN, maxPerSecond: 5 });
      expect(put.status).to.equal(200);
      expect(put.body).to.deep.equal({ channel: { configured: true, phoneNumberId: '106540352242922', accessToken: { configured: true, last4: 'l9Qz' }, maxPerSecond: 5, appSecret: { configured: false }, verifyToken: { configured: false }, optOutKeywords: ['STOP', 'UNSUBSCRIBE', 'ARRET', 'BAJA', 'PARAR', 'STOPP'], frequencyCap: null } });
      expect(JSON.stringify(put.body)).not.to.contain(TOKEN);
      const row = await rawRow('whatsapp_channels', accountId);
      expect(JSON.stringify(row)).not.to.contain('secretToken');
      expect(row.access_token_secret).to.match(/^v1\./);

      const changed = await api(key).put('/channels/whatsapp').send({ phoneNumberId: '200000000000001' });
      expect(changed.body.channel).to.deep.include({ phoneNumberId: '200000000000001', maxPerSecond: 5 });
      expect(await resolveWhatsAppSender(testDb(), accountId, settings)).to.deep.include({ phoneNumberId: '200000000000001', accessToken: TOKEN });
      expect((await api(key).get('/channels/whatsapp')).body).to.deep.equal(changed.body);
    });

    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ['no token the first time', { phoneNumberId: '106540352242922' }, 'accessToken'],
      ['a phone number instead of its id', { phoneNumberId: '+1 555 0100', accessToken: TOKEN }, 'phoneNumberId'],
      ['a token with spaces', { phoneNumberId: '1065', accessToken: 'two words that are long enough' }, 'accessToken'],
      ['a maxPerSecond above WHATSAPP_MAX_PER_SECOND', { phoneNumberId: '1065', accessToken: TOKEN, maxPerSecond: 21 }, 'maxPerSecond'],
    ];
    for (const [what, body, field] of refusals) {
      it(`answers 400 naming ${field} for ${what}, and writes nothing`, async () => {
        const { key, accountId } = await buildTenant();
        const res = await api(key).put('/channels/whatsapp').send(body);
        expect(res.status).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.details.map((d: { path: string }) => d.path)).to.include(field);
        expect(await rawRow('whatsapp_channels', accountId)).to.equal(undefined);
      });
    }

    it('without a secrets key answers 409 secrets_key_missing and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const res = await channelsApi(channelSettings({ secrets: null }))(key).put('/channels/whatsapp').send({ phoneNumberId: '1065', accessToken: TOKEN });
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('secrets_key_missing');
      expect(await rawRow('whatsapp_channels', accountId)).to.equal(undefined);
    });
  });

  it('answers 401 without a key, and the same settings over tRPC', async () => {
    const { key } = await buildTenant();
    const app = appWithChannels(settings);
    expect((await request(app).get('/api/v1/channels/email')).status).to.equal(401);
    const rpc = await request(app).get('/trpc/channels.getWhatsApp?input=%7B%7D').set('x-api-key', key);
    expect(rpc.status).to.equal(200);
    expect(rpc.body.result.data.channel.configured).to.equal(false);
    const put = await request(app)
      .post('/trpc/channels.putEmail')
      .set('x-api-key', key)
      .send({ from: 'rpc@shop.example', smtpUrl: 'ftp://x' });
    expect(put.status).to.equal(400);
    expect(put.body.error.data.appCode).to.equal('validation_failed');
  });
});
