import { expect } from 'chai';
import { withTransaction } from '../../src/db/sql/transaction';
import { pauseChannels } from '../../src/services/channels/channel-pauses';
import { caller } from '../support/app';
import { channelSettings, channelsApi } from '../support/channels';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';

// GET /channels/pauses (docs/channels.md "What pauses a channel, and how it resumes"): what is
// paused now, as the engine records it (pauseChannels), and what a settings save resumes.

describe('GET /channels/pauses', () => {
  const settings = channelSettings({ emailFrom: 'server@svc.example' });
  const api = channelsApi(settings);

  async function pausedTenant() {
    const tenant = await buildTenant();
    const now = new Date('2026-12-01T09:30:00.000Z');
    await withTransaction(testDb(), (transaction) =>
      pauseChannels(
        testDb(),
        [
          { accountId: tenant.accountId, channel: 'email', step: null, code: 'smtp_auth_failed', reason: 'smtp auth failed (535 5.7.8)' },
          { accountId: tenant.accountId, channel: 'whatsapp', step: { sequenceId: '7e5d3c1b-9a8f-4e6d-8c4b-2a1f0e9d8c7b', stepId: 'chat' }, code: 'whatsapp_template_error', reason: "Graph refused the step's template (132001)" },
        ],
        { now },
        transaction,
      ),
    );
    return tenant;
  }

  it('answers 200 with nothing when nothing is paused', async () => {
    const { key } = await buildTenant();
    const res = await api(key).get('/channels/pauses');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ pauses: [] });
  });

  it('answers each pause, oldest first, filtered by channel; another account sees none of them', async () => {
    const { key } = await pausedTenant();
    const res = await api(key).get('/channels/pauses');
    expect(res.status).to.equal(200);
    expect(res.body.pauses).to.deep.equal([
      { channel: 'email', code: 'smtp_auth_failed', reason: 'smtp auth failed (535 5.7.8)', sequenceId: null, stepId: null, pausedAt: '2026-12-01T09:30:00.000Z', nextProbeAt: '2026-12-01T09:30:05.000Z' },
      {
        channel: 'whatsapp',
        code: 'whatsapp_template_error',
        reason: "Graph refused the step's template (132001)",
        sequenceId: '7e5d3c1b-9a8f-4e6d-8c4b-2a1f0e9d8c7b',
        stepId: 'chat',
        pausedAt: '2026-12-01T09:30:00.000Z',
        nextProbeAt: null,
      },
    ]);
    expect((await api(key).get('/channels/pauses?channel=whatsapp')).body.pauses.map((pause: { channel: string }) => pause.channel)).to.deep.equal(['whatsapp']);
    expect((await caller(key).channels.pauses({ channel: 'email' })).pauses).to.have.length(1);
    const other = await buildTenant();
    expect((await api(other.key).get('/channels/pauses')).body).to.deep.equal({ pauses: [] });
  });

  it('is empty for the email channel once its settings are saved', async () => {
    const { key } = await pausedTenant();
    const put = await api(key).put('/channels/email').send({ from: 'news@shop.example' });
    expect(put.status).to.equal(200);
    expect((await api(key).get('/channels/pauses')).body.pauses.map((pause: { channel: string }) => pause.channel)).to.deep.equal(['whatsapp']);
  });

  it('refuses an unknown channel with a 400 naming the field, and no key with a 401', async () => {
    const { key } = await buildTenant();
    const bad = await api(key).get('/channels/pauses?channel=sms');
    expect(bad.status).to.equal(400);
    expect(JSON.stringify(bad.body)).to.contain('channel');
    const anonymous = await api('').get('/channels/pauses');
    expect(anonymous.status).to.equal(401);
  });
});
