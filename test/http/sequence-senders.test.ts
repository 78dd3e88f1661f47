import { expect } from 'chai';
import request from 'supertest';
import { createCaller, createCallerContext } from '../../src/routers/caller';
import { appWithChannels, channelSettings } from '../support/channels';
import { testDb } from '../support/db';
import { buildTenant } from '../support/factories';
import type { ChannelSettings } from '../../src/services/channels/channel-settings';

// An active sequence must be able to send its emails (issue 37, item 14): an email step without
// `from`, in an account without a sender, on a server without EMAIL_FROM, is a 409
// sender_required when saved active or activated (REST and tRPC here; the command line in
// test/cli/sequence-steps.test.ts, the dashboard in builder-sender-browser.test.ts), naming the
// step's from; nothing is stored. A draft may hold it.

const NO_FROM = [
  { id: 'hello', type: 'email', subject: 'Hello', html: '<p>Hi</p>' },
  { id: 'mark', type: 'tag', add: ['greeted'] },
];

describe('an active sequence needs a sender for its emails (409 sender_required)', () => {
  const apps = new Map<ChannelSettings, ReturnType<typeof appWithChannels>>();
  const rest = (channels: ChannelSettings, key: string) => {
    if (!apps.has(channels)) apps.set(channels, appWithChannels(channels));
    const app = apps.get(channels)!;
    return {
      get: (path: string) => request(app).get(`/api/v1${path}`).set('x-api-key', key),
      post: (path: string, body: unknown) => request(app).post(`/api/v1${path}`).set('x-api-key', key).send(body as object),
      patch: (path: string, body: unknown) => request(app).patch(`/api/v1${path}`).set('x-api-key', key).send(body as object),
      put: (path: string, body: unknown) => request(app).put(`/api/v1${path}`).set('x-api-key', key).send(body as object),
    };
  };
  const noSender = channelSettings();
  const serverFrom = channelSettings({ emailFrom: 'Shop <shop@svc.example.com>' });

  const expectSenderRequired = (res: request.Response, path: string, step: string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(409);
    expect(res.body.code).to.equal('sender_required');
    expect(res.body.error).to.match(new RegExp(`^Step "${step}" has no sender: give the step a From, or set the account's sender \\(PUT /channels/email`));
    expect(res.body.details).to.deep.equal([{ path, message: res.body.error }]);
  };

  it('refuses to create it active, stores nothing, and accepts it as a draft, with a From, or with EMAIL_FROM', async () => {
    const { key } = await buildTenant();
    const api = rest(noSender, key);
    expectSenderRequired(await api.post('/sequences', { name: 'Welcome', status: 'active', steps: NO_FROM }), 'steps.0.from', 'hello');
    // A step without an id is named by its place.
    const unnamed = await api.post('/sequences', { name: 'Welcome', status: 'active', steps: [{ type: 'tag', add: ['x'] }, { type: 'email', subject: 'S', html: '<p>h</p>' }] });
    expect(unnamed.status).to.equal(409);
    expect(unnamed.body.details[0].path).to.equal('steps.1.from');
    expect(unnamed.body.error).to.match(/^Step 2 \(email\) has no sender/);
    expect((await api.get('/sequences')).body.sequences).to.deep.equal([]);

    expect((await api.post('/sequences', { name: 'Draft', steps: NO_FROM })).body.sequence.status).to.equal('draft');
    const withFrom = await api.post('/sequences', { name: 'Own from', status: 'active', steps: [{ ...NO_FROM[0], from: 'Shop <news@shop.example>' }] });
    expect(withFrom.status).to.equal(201);
    expect((await rest(serverFrom, key).post('/sequences', { name: 'Server from', status: 'active', steps: NO_FROM })).status).to.equal(201);
  });

  it('refuses to activate it or give an active sequence such a step, changing nothing; the account\'s sender lets it through', async () => {
    const { key } = await buildTenant();
    const api = rest(noSender, key);
    const draft = (await api.post('/sequences', { name: 'Welcome', steps: NO_FROM })).body.sequence;
    expectSenderRequired(await api.patch(`/sequences/${draft.id}`, { status: 'active' }), 'steps.0.from', 'hello');
    expect((await api.get(`/sequences/${draft.id}`)).body.sequence).to.include({ status: 'draft', version: 1 });

    // An active sequence without email steps: new steps with one are refused, the version kept.
    const active = (await api.post('/sequences', { name: 'Tags', status: 'active', steps: [{ id: 'mark', type: 'tag', add: ['x'] }] })).body.sequence;
    expectSenderRequired(await api.patch(`/sequences/${active.id}`, { steps: [{ id: 'mark', type: 'tag', add: ['x'] }, NO_FROM[0]] }), 'steps.1.from', 'hello');
    expect((await api.get(`/sequences/${active.id}`)).body.sequence).to.include({ status: 'active', version: 1 });
    // Renaming it, or pausing the draft, checks nothing.
    expect((await api.patch(`/sequences/${active.id}`, { name: 'Renamed' })).status).to.equal(200);
    expect((await api.patch(`/sequences/${draft.id}`, { status: 'paused' })).status).to.equal(200);

    expect((await api.put('/channels/email', { from: 'hello@acme.example' })).status).to.equal(200);
    expect((await api.patch(`/sequences/${draft.id}`, { status: 'active' })).body.sequence.status).to.equal('active');
    expect((await api.patch(`/sequences/${active.id}`, { steps: [{ id: 'mark', type: 'tag', add: ['x'] }, NO_FROM[0]] })).body.sequence.version).to.equal(2);
  });

  it('is the same 409 through tRPC', async () => {
    const { key } = await buildTenant();
    const trpc = createCaller(createCallerContext({ db: testDb(), apiKey: key, channels: noSender }));
    const draft = (await trpc.sequences.create({ name: 'Welcome', steps: NO_FROM as never })).sequence;
    const refused = await trpc.sequences.update({ id: draft.id, status: 'active' }).then(
      () => null,
      (error: { code?: string; cause?: { code?: string; details?: unknown } }) => error,
    );
    expect(refused?.code).to.equal('CONFLICT');
    expect(refused?.cause).to.include({ code: 'sender_required' });
    expect(refused?.cause?.details).to.deep.equal([{ path: 'steps.0.from', message: (refused as unknown as Error).message }]);

    expect((await trpc.sequences.get({ id: draft.id })).sequence.status).to.equal('draft');
  });
});
