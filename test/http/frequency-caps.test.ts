import { expect } from 'chai';
import { select } from '../../src/db/sql/statements';
import { channelSettings, channelsApi } from '../support/channels';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';

// The channels' frequency caps over REST (docs/channels.md "Frequency caps"): PUT sets one, GET
// shows it, null clears it, left out keeps it; bad input is a 400 naming the field, nothing written.

const TOKEN = 'EAAGm0PX4ZCpsBAKzZBQ7Zx1Zx2secretTokenTail9Qz';
const CAP = { max: 2, per: 'P1D', whenCapped: 'wait' };

async function storedCap(table: string, accountId: string) {
  const [row] = await select<Record<string, unknown>>(testDb(), `SELECT frequency_cap_max, frequency_cap_per, frequency_cap_when FROM ${table} WHERE account_id = ?`, [accountId]);
  return row;
}

describe('channel frequency caps over REST', () => {
  const api = channelsApi(channelSettings({ emailFrom: 'server@svc.example' }));

  it('sets, shows, keeps and clears an email cap', async () => {
    const { key, accountId } = await buildTenant();
    expect((await api(key).get('/channels/email')).body.channel.frequencyCap).to.equal(null);
    const put = await api(key).put('/channels/email').send({ from: 'news@shop.example', frequencyCap: CAP });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.channel.frequencyCap).to.deep.equal(CAP);
    expect((await api(key).get('/channels/email')).body.channel.frequencyCap).to.deep.equal(CAP);
    // Left out: kept.
    const kept = await api(key).put('/channels/email').send({ from: 'news@shop.example', maxPerSecond: 5 });
    expect(kept.body.channel).to.deep.include({ maxPerSecond: 5, frequencyCap: CAP });
    const skip = await api(key).put('/channels/email').send({ from: 'news@shop.example', frequencyCap: { max: 1, per: 'PT12H', whenCapped: 'skip' } });
    expect(skip.body.channel.frequencyCap).to.deep.equal({ max: 1, per: 'PT12H', whenCapped: 'skip' });
    const cleared = await api(key).put('/channels/email').send({ from: 'news@shop.example', frequencyCap: null });
    expect(cleared.status).to.equal(200);
    expect(cleared.body.channel.frequencyCap).to.equal(null);
    expect((await api(key).get('/channels/email')).body.channel.frequencyCap).to.equal(null);
    expect(await storedCap('email_channels', accountId)).to.deep.equal({ frequency_cap_max: null, frequency_cap_per: null, frequency_cap_when: null });
  });

  it('sets, shows and clears a WhatsApp cap', async () => {
    const { key, accountId } = await buildTenant();
    expect((await api(key).get('/channels/whatsapp')).body.channel.frequencyCap).to.equal(null);
    const put = await api(key).put('/channels/whatsapp').send({ phoneNumberId: '106540352242922', accessToken: TOKEN, frequencyCap: { max: 3, per: 'P1W', whenCapped: 'skip' } });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.channel.frequencyCap).to.deep.equal({ max: 3, per: 'P1W', whenCapped: 'skip' });
    // Without the token (kept), the cap changes alone.
    const changed = await api(key).put('/channels/whatsapp').send({ phoneNumberId: '106540352242922', frequencyCap: CAP });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect((await api(key).get('/channels/whatsapp')).body.channel.frequencyCap).to.deep.equal(CAP);
    const cleared = await api(key).put('/channels/whatsapp').send({ phoneNumberId: '106540352242922', frequencyCap: null });
    expect(cleared.body.channel.frequencyCap).to.equal(null);
    expect(await storedCap('whatsapp_channels', accountId)).to.deep.equal({ frequency_cap_max: null, frequency_cap_per: null, frequency_cap_when: null });
  });

  const bad: Array<[string, unknown]> = [
    ['frequencyCap.max', { ...CAP, max: 0 }],
    ['frequencyCap.max', { ...CAP, max: 1.5 }],
    ['frequencyCap.max', { per: 'P1D', whenCapped: 'wait' }],
    ['frequencyCap.max', { ...CAP, max: 10_001 }],
    ['frequencyCap.per', { ...CAP, per: 'one day' }],
    ['frequencyCap.per', { ...CAP, per: 'P2Y' }],
    ['frequencyCap.per', { ...CAP, per: '-P1D' }],
    ['frequencyCap.per', { ...CAP, per: 'PT0S' }],
    ['frequencyCap.whenCapped', { ...CAP, whenCapped: 'drop' }],
    ['frequencyCap', 'P1D'],
  ];
  for (const [field, frequencyCap] of bad) {
    it(`refuses ${JSON.stringify(frequencyCap)} with a 400 naming ${field}, and writes nothing`, async () => {
      const { key, accountId } = await buildTenant();
      await api(key).put('/channels/email').send({ from: 'news@shop.example', frequencyCap: CAP }).expect(200);
      const res = await api(key).put('/channels/email').send({ from: 'changed@shop.example', frequencyCap });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.details.map((d: { path: string }) => d.path)).to.include(field);
      const got = await api(key).get('/channels/email');
      expect(got.body.channel).to.deep.include({ from: 'news@shop.example', frequencyCap: CAP });
      const wa = await api(key).put('/channels/whatsapp').send({ phoneNumberId: '106540352242922', accessToken: TOKEN, frequencyCap });
      expect(wa.status).to.equal(400);
      expect(wa.body.details.map((d: { path: string }) => d.path)).to.include(field);
      expect(await storedCap('whatsapp_channels', accountId)).to.equal(undefined);
    });
  }
});
