import { expect } from 'chai';
import request from 'supertest';
import { select } from '../../src/db/sql/statements';
import type { ChannelSettings } from '../../src/services/channels/channel-settings';
import { resolveEmailSender } from '../../src/services/channels/senders';
import type { TxtResolver } from '../../src/services/channels/txt-lookup';
import { appWithChannels, channelSettings, dkimPrivateKey } from '../support/channels';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';

// /channels/email/domains and the From rules of PUT /channels/email (docs/channels.md
// "Verified sending domains and the DNS records"). The resolver is the test's: a zone of TXT
// records it can change, and names that never answer.

class Zone {
  readonly records = new Map<string, string[]>();
  readonly hanging = new Set<string>();
  readonly asked: string[] = [];
  resolver: TxtResolver = async (name) => {
    this.asked.push(name);
    if (this.hanging.has(name)) return new Promise<never>(() => {});
    const found = this.records.get(name);
    if (!found || found.length === 0) throw Object.assign(new Error(`queryTxt ENODATA ${name}`), { code: 'ENODATA' });
    // As node:dns answers: each record split in strings of at most 255 characters.
    return found.map((record) => record.match(/.{1,255}/g) ?? ['']);
  };
  set(name: string, ...records: string[]) {
    this.records.set(name, records);
  }
}

// Made at first use: the test database opens after the files are loaded.
function api(settings: ChannelSettings) {
  let built: ReturnType<typeof appWithChannels> | undefined;
  const app = () => (built ??= appWithChannels(settings));
  return (key: string) => ({
    get: (path: string) => request(app()).get(`/api/v1${path}`).set('x-api-key', key),
    post: (path: string) => request(app()).post(`/api/v1${path}`).set('x-api-key', key),
    put: (path: string) => request(app()).put(`/api/v1${path}`).set('x-api-key', key),
    delete: (path: string) => request(app()).delete(`/api/v1${path}`).set('x-api-key', key),
  });
}

async function domainRows(accountId: string) {
  return select<{ domain: string; token: string; verified_at: unknown }>(testDb(), 'SELECT domain, token, verified_at FROM email_domains WHERE account_id = ?', [accountId]);
}

const recordOf = (body: { domain: { records: Array<{ purpose: string }> } }, purpose: string) =>
  body.domain.records.find((record) => record.purpose === purpose) as Record<string, unknown>;

describe('sending domains over REST', () => {
  const zone = new Zone();
  const settings = channelSettings({
    smtpUrl: 'smtp://relay.svc.example:587',
    emailFrom: 'Svc <news@svc.example>',
    bounceDomain: 'bounces.svc.example',
    resolveTxt: zone.resolver,
    txtTimeoutMs: 50,
  });
  const rest = api(settings);

  async function addedAndPublished(key: string, domain: string) {
    const added = await rest(key).post('/channels/email/domains').send({ domain });
    expect(added.status, JSON.stringify(added.body)).to.equal(201);
    zone.set(`_svc-verify.${domain}`, recordOf(added.body, 'verification').value as string);
    const verified = await rest(key).post(`/channels/email/domains/${domain}/verify`).send({});
    expect(verified.body.domain.status).to.equal('verified');
    return verified.body.domain;
  }

  describe('POST /channels/email/domains', () => {
    it('adds the domain (201) and answers its token record, the DKIM, SPF and DMARC records, and what the resolver saw', async () => {
      const { key, accountId } = await buildTenant();
      zone.set('add.example', 'v=spf1 a:relay.svc.example ~all', 'google-site-verification=abc');
      zone.set('_dmarc.add.example', 'v=DMARC1; p=quarantine');
      const res = await rest(key).post('/channels/email/domains').send({ domain: 'Add.Example' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const { domain } = res.body;
      expect(domain).to.deep.include({ domain: 'add.example', status: 'pending', verifiedAt: null });
      expect(domain.lastCheckedAt).to.be.a('string');
      const [row] = await domainRows(accountId);
      expect(row!.token).to.match(/^svc-verify=[0-9a-f]{32}$/);
      expect(domain.records).to.deep.equal([
        { purpose: 'verification', type: 'TXT', name: '_svc-verify.add.example', value: row!.token, seen: [], status: 'missing', problem: null },
        {
          purpose: 'dkim',
          type: 'TXT',
          name: null,
          value: null,
          seen: null,
          status: 'no_key',
          problem: 'The account has no DKIM key for this domain or a parent of it (PUT /channels/email, dkim)',
        },
        { purpose: 'spf', type: 'TXT', name: 'add.example', value: 'v=spf1 a:relay.svc.example ~all', seen: ['v=spf1 a:relay.svc.example ~all'], status: 'found', problem: null },
        { purpose: 'dmarc', type: 'TXT', name: '_dmarc.add.example', value: 'v=DMARC1; p=none; adkim=r; aspf=r', seen: ['v=DMARC1; p=quarantine'], status: 'found', problem: null },
      ]);
    });

    it('answers a domain added before as it is (200, the same token), checked again, and keeps one row', async () => {
      const { key, accountId } = await buildTenant();
      const first = await rest(key).post('/channels/email/domains').send({ domain: 'again.example' });
      const second = await rest(key).post('/channels/email/domains').send({ domain: 'again.example' });
      expect(first.status).to.equal(201);
      expect(second.status).to.equal(200);
      expect(recordOf(second.body, 'verification').value).to.equal(recordOf(first.body, 'verification').value);
      expect(await domainRows(accountId)).to.have.length(1);
    });

    it('gives each account its own token for the same domain', async () => {
      const a = await buildTenant();
      const b = await buildTenant();
      const one = await rest(a.key).post('/channels/email/domains').send({ domain: 'shared.example' });
      const two = await rest(b.key).post('/channels/email/domains').send({ domain: 'shared.example' });
      expect(two.status).to.equal(201);
      expect(recordOf(two.body, 'verification').value).not.to.equal(recordOf(one.body, 'verification').value);
    });

    const refusals: Array<[string, unknown]> = [
      ['a name that is not a domain', { domain: 'not a domain' }],
      ['a name without a dot', { domain: 'localhost' }],
      ['no domain', {}],
      ['a number', { domain: 42 }],
      ["the server's own domain (EMAIL_FROM's)", { domain: 'svc.example' }],
      ["the server's BOUNCE_DOMAIN", { domain: 'bounces.svc.example' }],
    ];
    for (const [what, body] of refusals) {
      it(`answers 400 naming domain for ${what}, and writes nothing`, async () => {
        const { key, accountId } = await buildTenant();
        const res = await rest(key).post('/channels/email/domains').send(body as object);
        expect(res.status).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.details.map((d: { path: string }) => d.path)).to.include('domain');
        expect(await domainRows(accountId)).to.deep.equal([]);
      });
    }
  });

  describe('GET /channels/email/domains', () => {
    it("lists the account's domains with the records to publish, without a lookup, and the server's own domains", async () => {
      const { key } = await buildTenant();
      const other = await buildTenant();
      await rest(key).post('/channels/email/domains').send({ domain: 'b-list.example' }).expect(201);
      await rest(key).post('/channels/email/domains').send({ domain: 'a-list.example' }).expect(201);
      await rest(other.key).post('/channels/email/domains').send({ domain: 'theirs.example' }).expect(201);
      const asked = zone.asked.length;
      const res = await rest(key).get('/channels/email/domains');
      expect(res.status).to.equal(200);
      expect(zone.asked.length, 'no lookup').to.equal(asked);
      expect(res.body.operatorDomains).to.deep.equal(['svc.example', 'bounces.svc.example']);
      expect(res.body.domains.map((d: { domain: string }) => d.domain)).to.deep.equal(['a-list.example', 'b-list.example']);
      const verification = res.body.domains[0].records[0];
      expect(verification).to.deep.include({ purpose: 'verification', name: '_svc-verify.a-list.example', seen: null, status: 'not_checked' });
      expect(verification.value).to.match(/^svc-verify=/);
    });
  });

  describe('POST /channels/email/domains/{domain}/verify', () => {
    it('verifies the domain once its token is published, and it stays verified when the record goes', async () => {
      const { key, accountId } = await buildTenant();
      const added = await rest(key).post('/channels/email/domains').send({ domain: 'proven.example' });
      const token = recordOf(added.body, 'verification').value as string;
      zone.set('_svc-verify.proven.example', 'some-other-service=1', token);
      const res = await rest(key).post('/channels/email/domains/proven.example/verify').send({});
      expect(res.status).to.equal(200);
      expect(res.body.domain.status).to.equal('verified');
      expect(res.body.domain.verifiedAt).to.be.a('string');
      expect(recordOf(res.body, 'verification')).to.deep.include({ status: 'found', seen: ['some-other-service=1', token] });
      const verifiedAt = res.body.domain.verifiedAt;

      zone.set('_svc-verify.proven.example');
      const later = await rest(key).post('/channels/email/domains/proven.example/verify').send({});
      expect(later.body.domain).to.deep.include({ status: 'verified', verifiedAt });
      expect(recordOf(later.body, 'verification').status).to.equal('missing');
      const [row] = await domainRows(accountId);
      expect(row!.verified_at).not.to.equal(null);
    });

    it('leaves the domain pending when the record is absent, or holds another token (mismatch)', async () => {
      const { key, accountId } = await buildTenant();
      await rest(key).post('/channels/email/domains').send({ domain: 'wrong.example' }).expect(201);
      const absent = await rest(key).post('/channels/email/domains/wrong.example/verify').send({});
      expect(absent.body.domain.status).to.equal('pending');
      expect(recordOf(absent.body, 'verification')).to.deep.include({ status: 'missing', seen: [] });

      zone.set('_svc-verify.wrong.example', 'svc-verify=00000000000000000000000000000000');
      const wrong = await rest(key).post('/channels/email/domains/wrong.example/verify').send({});
      expect(wrong.body.domain.status).to.equal('pending');
      expect(recordOf(wrong.body, 'verification')).to.deep.include({ status: 'mismatch', seen: ['svc-verify=00000000000000000000000000000000'] });
      const [row] = await domainRows(accountId);
      expect(row!.verified_at).to.equal(null);
    });

    it('answers lookup_failed, within the bound, for a name that never answers, and changes nothing', async () => {
      const { key, accountId } = await buildTenant();
      const added = await rest(key).post('/channels/email/domains').send({ domain: 'slow.example' });
      zone.hanging.add('_svc-verify.slow.example');
      zone.hanging.add('_dmarc.slow.example');
      zone.set('slow.example', 'v=spf1 a:relay.svc.example ~all');
      const began = Date.now();
      const res = await rest(key).post('/channels/email/domains/slow.example/verify').send({});
      expect(Date.now() - began, 'one bound (50 ms) for all the lookups at once').to.be.below(2_000);
      expect(res.status).to.equal(200);
      expect(res.body.domain.status).to.equal('pending');
      expect(recordOf(res.body, 'verification')).to.deep.include({ status: 'lookup_failed', seen: null, problem: 'the lookup of _svc-verify.slow.example timed out' });
      expect(recordOf(res.body, 'dmarc')).to.deep.include({ status: 'lookup_failed' });
      expect(recordOf(res.body, 'spf')).to.deep.include({ status: 'found' });
      expect(recordOf(res.body, 'verification').value).to.equal(recordOf(added.body, 'verification').value);
      expect((await domainRows(accountId))[0]!.verified_at).to.equal(null);
    });

    it("checks the account's DKIM key record and the SPF record of its own relay", async () => {
      const { key } = await buildTenant();
      await addedAndPublished(key, 'signed.example');
      const put = await rest(key)
        .put('/channels/email')
        .send({ from: 'news@mail.signed.example', smtpUrl: 'smtps://u:p@smtp.relay.example:465', dkim: { domain: 'signed.example', selector: 's1', privateKey: dkimPrivateKey() } });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      const dkim = put.body.channel.dkim.dnsRecord;
      zone.set(dkim.name, dkim.value);
      zone.set('signed.example', 'v=spf1 include:_spf.other.example ~all');
      const res = await rest(key).post('/channels/email/domains/signed.example/verify').send({});
      expect(recordOf(res.body, 'dkim')).to.deep.include({ name: 's1._domainkey.signed.example', value: dkim.value, status: 'found' });
      expect(recordOf(res.body, 'spf')).to.deep.include({ value: 'v=spf1 a:smtp.relay.example ~all', status: 'mismatch' });

      zone.set('signed.example', 'v=spf1 a:smtp.relay.example ~all', 'v=spf1 mx -all');
      const two = await rest(key).post('/channels/email/domains/signed.example/verify').send({});
      expect(recordOf(two.body, 'spf')).to.deep.include({ status: 'mismatch' });
      expect(recordOf(two.body, 'spf').problem).to.match(/^2 SPF records/);

      zone.set(dkim.name, 'v=DKIM1; k=rsa; p=MIIBIjANotThisKey');
      const otherKey = await rest(key).post('/channels/email/domains/signed.example/verify').send({});
      expect(recordOf(otherKey.body, 'dkim')).to.deep.include({ status: 'mismatch' });
    });

    it("answers 404 for a domain the account has not added (another account's included)", async () => {
      const { key } = await buildTenant();
      const other = await buildTenant();
      await rest(other.key).post('/channels/email/domains').send({ domain: 'not-yours.example' }).expect(201);
      for (const path of ['/channels/email/domains/not-yours.example/verify', '/channels/email/domains/never.example/verify', '/channels/email/domains/%E0%A4%A/verify']) {
        const res = await rest(key).post(path).send({});
        expect(res.status, path).to.equal(404);
        expect(res.body.code).to.equal('not_found');
      }
    });
  });

  describe('DELETE /channels/email/domains/{domain}', () => {
    it('deletes it (204), then answers 404; another account cannot delete it', async () => {
      const { key, accountId } = await buildTenant();
      const other = await buildTenant();
      await rest(key).post('/channels/email/domains').send({ domain: 'gone.example' }).expect(201);
      expect((await rest(other.key).delete('/channels/email/domains/gone.example')).status).to.equal(404);
      const res = await rest(key).delete('/channels/email/domains/Gone.Example');
      expect(res.status).to.equal(204);
      expect(res.text).to.equal('');
      expect(await domainRows(accountId)).to.deep.equal([]);
      const again = await rest(key).delete('/channels/email/domains/gone.example');
      expect(again.status).to.equal(404);
      expect(again.body.code).to.equal('not_found');
    });

    it("answers 409 domain_in_use for the account's bounceDomain, and keeps it", async () => {
      const { key, accountId } = await buildTenant();
      await addedAndPublished(key, 'bounce-own.example');
      const put = await rest(key).put('/channels/email').send({ from: 'news@bounce-own.example', bounceDomain: 'bounce-own.example' });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(put.body.channel.bounceDomain).to.equal('bounce-own.example');
      const res = await rest(key).delete('/channels/email/domains/bounce-own.example');
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('domain_in_use');
      expect(res.body.details[0].path).to.equal('bounceDomain');
      expect(await domainRows(accountId)).to.have.length(1);
      await rest(key).put('/channels/email').send({ from: 'news@bounce-own.example', bounceDomain: null }).expect(200);
      expect((await rest(key).delete('/channels/email/domains/bounce-own.example')).status).to.equal(204);
    });
  });

  describe('PUT /channels/email: the From, DKIM alignment and the bounce domain', () => {
    async function rawChannel(accountId: string) {
      const [row] = await select<Record<string, unknown>>(testDb(), 'SELECT * FROM email_channels WHERE account_id = ?', [accountId]);
      return row;
    }

    it('answers 400 naming from for a From outside the verified domains on the shared relay, and writes nothing', async () => {
      const { key, accountId } = await buildTenant();
      await rest(key).post('/channels/email/domains').send({ domain: 'pending.example' }).expect(201);
      for (const from of ['security@bank.example', 'news@pending.example', 'x@notsvc.example']) {
        const res = await rest(key).put('/channels/email').send({ from });
        expect(res.status, from).to.equal(400);
        expect(res.body.details).to.have.length(1);
        expect(res.body.details[0].path).to.equal('from');
        expect(res.body.details[0].message).to.include('is not a verified sending domain of the account');
      }
      expect(await rawChannel(accountId)).to.equal(undefined);
    });

    it("accepts a From in a verified domain, a subdomain of one, or the server's own domains", async () => {
      const { key } = await buildTenant();
      await addedAndPublished(key, 'mine.example');
      for (const from of ['news@mine.example', 'news@eu.mine.example', 'ops@svc.example', 'x@bounces.svc.example']) {
        const res = await rest(key).put('/channels/email').send({ from });
        expect(res.status, `${from}: ${JSON.stringify(res.body)}`).to.equal(200);
      }
    });

    it('lets an account with its own relay send any From', async () => {
      const { key } = await buildTenant();
      const res = await rest(key).put('/channels/email').send({ from: 'news@anything.example', smtpUrl: 'smtps://u:p@smtp.anything.example:465' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      // Back to the shared relay with the same From: refused.
      const back = await rest(key).put('/channels/email').send({ from: 'news@anything.example', smtpUrl: null });
      expect(back.status).to.equal(400);
      expect(back.body.details[0].path).to.equal('from');
    });

    it('answers 400 naming dkim.domain for a DKIM domain that is not the From domain or a parent of it, whatever the relay', async () => {
      const { key, accountId } = await buildTenant();
      const own = 'smtps://u:p@smtp.shop.example:465';
      const refused = await rest(key)
        .put('/channels/email')
        .send({ from: 'news@shop.example', smtpUrl: own, dkim: { domain: 'unrelated.example', selector: 's1', privateKey: dkimPrivateKey() } });
      expect(refused.status).to.equal(400);
      expect(refused.body.details).to.deep.equal([{ path: 'dkim.domain', message: refused.body.details[0].message }]);
      expect(refused.body.details[0].message).to.include('DMARC');
      const child = await rest(key)
        .put('/channels/email')
        .send({ from: 'news@shop.example', smtpUrl: own, dkim: { domain: 'mail.shop.example', selector: 's1', privateKey: dkimPrivateKey() } });
      expect(child.status, 'a subdomain of the From domain is not a parent').to.equal(400);
      expect(await rawChannel(accountId)).to.equal(undefined);

      const parent = await rest(key)
        .put('/channels/email')
        .send({ from: 'news@eu.shop.example', smtpUrl: own, dkim: { domain: 'shop.example', selector: 's1', privateKey: dkimPrivateKey() } });
      expect(parent.status, JSON.stringify(parent.body)).to.equal(200);
      // The stored DKIM domain against a new From.
      const moved = await rest(key).put('/channels/email').send({ from: 'news@other.example' });
      expect(moved.status).to.equal(400);
      expect(moved.body.details[0].path).to.equal('dkim.domain');
    });

    it("takes a bounceDomain among the account's verified domains only; the sender gets it, else BOUNCE_DOMAIN", async () => {
      const { key, accountId } = await buildTenant();
      await rest(key).post('/channels/email/domains').send({ domain: 'unproven.example' }).expect(201);
      await addedAndPublished(key, 'proven-bounce.example');
      for (const bounceDomain of ['unproven.example', 'never-added.example', 'svc.example']) {
        const res = await rest(key).put('/channels/email').send({ from: 'news@svc.example', bounceDomain });
        expect(res.status, bounceDomain).to.equal(400);
        expect(res.body.details[0].path).to.equal('bounceDomain');
      }
      const bad = await rest(key).put('/channels/email').send({ from: 'news@svc.example', bounceDomain: 'not a domain' });
      expect(bad.status).to.equal(400);
      expect(bad.body.details[0].path).to.equal('bounceDomain');
      expect(await rawChannel(accountId)).to.equal(undefined);

      expect((await resolveEmailSender(testDb(), accountId, settings)).bounceDomain).to.equal('bounces.svc.example');
      const ok = await rest(key).put('/channels/email').send({ from: 'news@svc.example', bounceDomain: 'proven-bounce.example' });
      expect(ok.status).to.equal(200);
      expect((await resolveEmailSender(testDb(), accountId, settings)).bounceDomain).to.equal('proven-bounce.example');
      const kept = await rest(key).put('/channels/email').send({ from: 'news@svc.example' });
      expect(kept.body.channel.bounceDomain, 'left out: kept').to.equal('proven-bounce.example');
      expect((await resolveEmailSender(testDb(), accountId, { ...settings, bounceDomain: undefined })).bounceDomain).to.equal('proven-bounce.example');
      await rest(key).put('/channels/email').send({ from: 'news@svc.example', bounceDomain: null }).expect(200);
      expect((await resolveEmailSender(testDb(), accountId, { ...settings, bounceDomain: undefined })).bounceDomain).to.equal(null);
    });
  });
});

describe('relay URLs and the address policy', () => {
  const inside = ['smtp://127.0.0.1:6379', 'smtp://169.254.169.254:80', 'smtp://[::1]:25', 'smtp://localhost:3000', 'smtps://u:p@10.0.0.5:465', 'smtp://[fe80::1]:25'];

  it('answers 400 naming smtpUrl for loopback, private, link-local and metadata relays on a server database, and writes nothing', async () => {
    const rest = api(channelSettings({ allowPrivateRelays: false }));
    const { key, accountId } = await buildTenant();
    for (const smtpUrl of inside) {
      const res = await rest(key).put('/channels/email').send({ from: 'news@shop.example', smtpUrl });
      expect(res.status, smtpUrl).to.equal(400);
      expect(res.body.details).to.deep.equal([
        { path: 'smtpUrl', message: 'must not point to a loopback, private, link-local or other special-use address (SMTP_ALLOW_PRIVATE_RELAYS is off)' },
      ]);
    }
    const [row] = await select(testDb(), 'SELECT account_id FROM email_channels WHERE account_id = ?', [accountId]);
    expect(row).to.equal(undefined);
  });

  it('accepts them with SMTP_ALLOW_PRIVATE_RELAYS', async () => {
    const rest = api(channelSettings({ allowPrivateRelays: true }));
    const { key } = await buildTenant();
    for (const smtpUrl of inside) {
      const res = await rest(key).put('/channels/email').send({ from: 'news@shop.example', smtpUrl });
      expect(res.status, `${smtpUrl}: ${JSON.stringify(res.body)}`).to.equal(200);
      expect(res.body.channel.smtp.source).to.equal('account');
    }
  });

  it('answers 409 public_base_url_required for a relay that is not on loopback while PUBLIC_BASE_URL is not https, and writes nothing', async () => {
    const rest = api(channelSettings({ allowPrivateRelays: true, publicBaseUrl: 'http://localhost:3000' }));
    const { key, accountId } = await buildTenant();
    for (const smtpUrl of ['smtps://u:p@smtp.shop.example:465', 'smtp://10.0.0.5:25']) {
      const res = await rest(key).put('/channels/email').send({ from: 'news@shop.example', smtpUrl });
      expect(res.status, smtpUrl).to.equal(409);
      expect(res.body.code).to.equal('public_base_url_required');
      expect(res.body.error).to.include('PUBLIC_BASE_URL');
    }
    const [row] = await select(testDb(), 'SELECT account_id FROM email_channels WHERE account_id = ?', [accountId]);
    expect(row).to.equal(undefined);
    // A relay on this machine (Mailpit) sends nothing away: accepted.
    const local = await rest(key).put('/channels/email').send({ from: 'news@shop.example', smtpUrl: 'smtp://127.0.0.1:1025' });
    expect(local.status).to.equal(200);
  });
});
