import { expect } from 'chai';
import { catchUpProjection } from '../../src/services/events/projection/catch-up';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { select } from '../../src/db/sql/statements';
import { createCaller, createCallerContext } from '../../src/routers/caller';
import { readUnsubscribeToken } from '../../src/services/unsubscribe/unsubscribe-links';
import { api } from '../support/app';
import { appWithChannels, channelSettings } from '../support/channels';
import { captureQueries, testDb } from '../support/db';
import { buildContact, buildTenant } from '../support/factories';
import { badRequest, rejectedWith } from '../support/trpc';

// POST /sequences/{id}/preview and tRPC sequences.preview (docs/api.md "Preview a message
// step"): a message step of the current version rendered for one contact, with the sender and
// headers the real message carries; nothing sent, nothing written.

const BASE = 'https://contacts.example.com';
const FROM = 'Shop <news@shop.example>';

const STEPS = [
  { id: 'w', type: 'wait', duration: 'P1D' },
  {
    id: 'mail',
    type: 'email',
    subject: 'Welcome, {{ contact.firstName | default: "friend" }}',
    html: '<p>Hello {{ contact.firstName }}, plan {{ contact.customFields.plan }}.</p>{{ contact.customFields.banner | raw }}<p>Run {{ run.id | default: "none" }} of {{ sequence.name }}</p><a href="{{ unsubscribe_url }}">Unsubscribe</a>',
  },
  { id: 'mail-text', type: 'email', subject: 'Hi', html: '<p>Hi</p>', text: 'Hi {{ contact.firstName }}', from: 'Support <help@shop.example>', replyTo: 'replies@shop.example' },
  {
    id: 'chat',
    type: 'whatsapp',
    template: {
      name: 'welcome',
      language: { code: 'en_US' },
      components: [
        { type: 'body', parameters: [{ type: 'text', text: '{{ contact.firstName | default: "there" }}' }, { type: 'text', text: '{{ contact.customFields.plan }}' }] },
        { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '{{ unsubscribe_url }}' }] },
      ],
    },
  },
];

async function setUp(contactFields: Parameters<typeof buildContact>[1] = {}) {
  const tenant = await buildTenant();
  const created = await api(tenant.key).post('/sequences').send({ name: 'Welcome series', status: 'active', steps: STEPS });
  expect(created.status, created.text).to.equal(201);
  const contact = await buildContact(tenant.accountId, {
    firstName: '<script>alert(1)</script>',
    phone: '+44 7700 900123',
    customFields: { plan: 'pro', banner: '<b>Sale</b>' },
    ...contactFields,
  });
  return { ...tenant, sequenceId: created.body.sequence.id as string, contact };
}

// The server's sender settings: EMAIL_FROM, PUBLIC_BASE_URL and a secrets key (links are signed).
const settings = channelSettings({ emailFrom: FROM, publicBaseUrl: BASE });
let built: ReturnType<typeof appWithChannels> | undefined;
const previewApp = () => (built ??= appWithChannels(settings));
const previewCaller = (key: string) => createCaller(createCallerContext({ db: testDb(), apiKey: key, channels: settings }));

function preview(key: string, sequenceId: string, body: object) {
  return request(previewApp()).post(`/api/v1/sequences/${sequenceId}/preview`).set('x-api-key', key).send(body);
}

function trpcPreview(key: string, input: object) {
  return request(previewApp()).post('/trpc/sequences.preview').set('x-api-key', key).send(input);
}

function expectError(res: request.Response, status: number, code: string, error: RegExp) {
  expect(res.status, res.text).to.equal(status);
  expect(res.body).to.include({ code });
  expect(res.body.error).to.match(error);
}

// What a preview could have written, counted.
async function footprint(accountId: string) {
  const count = async (sql: string) => Number((await select<{ n: number | string }>(testDb(), sql, [accountId]))[0]!.n);
  return {
    runs: await count('SELECT COUNT(*) AS n FROM sequence_runs WHERE account_id = ?'),
    executions: await count('SELECT COUNT(*) AS n FROM run_step_executions WHERE account_id = ?'),
    events: await count('SELECT COUNT(*) AS n FROM events WHERE account_id = ?'),
    contactsChanged: await count('SELECT COUNT(*) AS n FROM contacts WHERE account_id = ? AND updated_at <> created_at'),
  };
}

describe('Message preview', () => {

  describe('POST /sequences/{id}/preview (REST)', () => {
    it('renders an email step for the contact: sender, recipient, escaped html, text from the html, unsubscribe headers', async () => {
      const { key, sequenceId, contact, accountId } = await setUp();
      const res = await preview(key, sequenceId, { stepId: 'mail', contactId: contact.id });
      expect(res.status, res.text).to.equal(200);
      expect(res.headers['content-type']).to.match(/^application\/json/);
      const { preview: body } = res.body;
      expect(body).to.have.all.keys('channel', 'from', 'to', 'subject', 'html', 'text', 'headers', 'skipReason');
      expect(body).to.include({ channel: 'email', from: FROM, to: contact.email, subject: 'Welcome, <script>alert(1)</script>', skipReason: null });
      const link = body.headers['List-Unsubscribe'].slice(1, -1);
      expect(link.startsWith(`${BASE}/u/`), link).to.equal(true);
      // Signed with the server's key: the link names this contact, and unsubscribes it.
      expect(readUnsubscribeToken(settings, link.slice(`${BASE}/u/`.length))).to.deep.equal({ accountId, contactId: contact.id, channel: 'email' });
      expect(body.headers).to.deep.equal({ 'List-Unsubscribe': `<${link}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
      expect(body.html).to.equal(
        `<p>Hello &lt;script&gt;alert(1)&lt;/script&gt;, plan pro.</p><b>Sale</b><p>Run none of Welcome series</p><a href="${link}">Unsubscribe</a>`,
      );
      expect(body.text).to.equal(`Hello <script>alert(1)</script>, plan pro.\n\nSale\n\nRun none of Welcome series\n\nUnsubscribe [${link}]`);
    });

    it('uses the step\'s own from, replyTo and text', async () => {
      const { key, sequenceId, contact } = await setUp({ firstName: 'Ada' });
      const res = await preview(key, sequenceId, { stepId: 'mail-text', contactId: contact.id });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.preview).to.include({ from: 'Support <help@shop.example>', subject: 'Hi', html: '<p>Hi</p>', text: 'Hi Ada' });
      expect(res.body.preview.headers).to.include({ 'Reply-To': 'replies@shop.example', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
    });

    it('reads the contact\'s latest run in the sequence as run', async () => {
      const { key, sequenceId, contact } = await setUp();
      const enrolled = await api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds: [contact.id] });
      expect(enrolled.status, enrolled.text).to.equal(201);
      const runs = await api(key).get(`/sequences/${sequenceId}/runs`);
      const res = await preview(key, sequenceId, { stepId: 'mail', contactId: contact.id });
      expect(res.body.preview.html).to.contain(`<p>Run ${runs.body.runs[0].id} of Welcome series</p>`);
    });

    it('renders a whatsapp step as the Cloud API request that would be sent', async () => {
      const { key, sequenceId, contact } = await setUp({ firstName: 'Ada & <Bob>' });
      const res = await preview(key, sequenceId, { stepId: 'chat', contactId: contact.id });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.preview).to.have.all.keys('channel', 'request', 'skipReason');
      expect(res.body.preview).to.include({ channel: 'whatsapp', skipReason: null });
      const { request: body } = res.body.preview;
      const link = body.template.components[1].parameters[0].text;
      expect(link.startsWith(`${BASE}/u/`), link).to.equal(true);
      expect(body).to.deep.equal({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: '447700900123',
        type: 'template',
        template: {
          name: 'welcome',
          language: { code: 'en_US' },
          components: [
            { type: 'body', parameters: [{ type: 'text', text: 'Ada & <Bob>' }, { type: 'text', text: 'pro' }] },
            { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: link }] },
          ],
        },
        biz_opaque_callback_data: 'preview',
      });
    });

    it('says why the real step would be skipped: unsubscribed, no phone, a phone WhatsApp cannot use', async () => {
      const { key, sequenceId, accountId } = await setUp();
      const cases: Array<[Parameters<typeof buildContact>[1], string, string | null, string]> = [
        [{ emailSubscriptionStatus: 'unsubscribed' }, 'mail', 'unsubscribed', 'email'],
        [{ whatsappSubscriptionStatus: 'unsubscribed' }, 'chat', 'unsubscribed', 'whatsapp'],
        [{ phone: null }, 'chat', 'no_phone', 'whatsapp'],
        [{ phone: '07700 900123' }, 'chat', 'invalid_phone', 'whatsapp'],
      ];
      for (const [fields, stepId, reason, channel] of cases) {
        const contact = await buildContact(accountId, fields);
        const res = await preview(key, sequenceId, { stepId, contactId: contact.id });
        expect(res.status, res.text).to.equal(200);
        expect(res.body.preview, JSON.stringify(fields)).to.include({ channel, skipReason: reason });
        if (channel === 'whatsapp' && reason !== 'unsubscribed') expect(res.body.preview.request.to).to.equal('');
      }
    });

    it('sends and writes nothing', async () => {
      const { key, sequenceId, contact, accountId } = await setUp();
      await api(key).post(`/sequences/${sequenceId}/enroll`).send({ contactIds: [contact.id] });
      // The enroll's run events and counters, projected (a read of the sequence would do it).
      await catchUpProjection(testDb());
      const before = await footprint(accountId);
      const { queries } = await captureQueries(async () => {
        for (const stepId of ['mail', 'chat']) expect((await previewCaller(key).sequences.preview({ id: sequenceId, stepId, contactId: contact.id })).preview).to.be.an('object');
      });
      expect(queries.filter((sql) => /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(sql))).to.deep.equal([]);
      expect(await footprint(accountId)).to.deep.equal(before);
    });

    it('answers 404 for an unknown sequence, another account\'s sequence or contact, and an unknown contact', async () => {
      const mine = await setUp();
      const theirs = await setUp();
      expectError(await preview(mine.key, randomUUID(), { stepId: 'mail', contactId: mine.contact.id }), 404, 'not_found', /^Sequence not found$/);
      expectError(await preview(mine.key, 'not-a-uuid', { stepId: 'mail', contactId: mine.contact.id }), 404, 'not_found', /^Sequence not found$/);
      expectError(await preview(mine.key, theirs.sequenceId, { stepId: 'mail', contactId: theirs.contact.id }), 404, 'not_found', /^Sequence not found$/);
      expectError(await preview(mine.key, mine.sequenceId, { stepId: 'mail', contactId: theirs.contact.id }), 404, 'not_found', /^Contact not found$/);
      expectError(await preview(mine.key, mine.sequenceId, { stepId: 'mail', contactId: randomUUID() }), 404, 'not_found', /^Contact not found$/);
    });

    it('answers 400 for a step that is not in the current version, or not a message step', async () => {
      const { key, sequenceId, contact } = await setUp();
      const unknown = await preview(key, sequenceId, { stepId: 'nope', contactId: contact.id });
      expectError(unknown, 400, 'validation_failed', /^Step "nope" is not a step of the sequence's current version \(1\)$/);
      expect(unknown.body.details).to.deep.equal([{ path: 'stepId', message: unknown.body.error }]);
      const wait = await preview(key, sequenceId, { stepId: 'w', contactId: contact.id });
      expectError(wait, 400, 'validation_failed', /^Step "w" is a wait step: only email and whatsapp steps send a message to preview$/);
      expect(wait.body.details[0].path).to.equal('stepId');

      // Gone from the current version: a step of an older one is not previewed.
      const changed = await api(key).patch(`/sequences/${sequenceId}`).send({ steps: STEPS.filter((step) => step.id !== 'chat') });
      expect(changed.status, changed.text).to.equal(200);
      expectError(await preview(key, sequenceId, { stepId: 'chat', contactId: contact.id }), 400, 'validation_failed', /current version \(2\)$/);

      const { key: otherKey, accountId } = await buildTenant();
      const empty = await api(otherKey).post('/sequences').send({ name: 'No steps' });
      const someone = await buildContact(accountId);
      expectError(await preview(otherKey, empty.body.sequence.id, { stepId: 'mail', contactId: someone.id }), 400, 'validation_failed', /\(it has no steps\)$/);
    });

    it('answers 400 for bad input, naming the field', async () => {
      const { key, sequenceId, contact } = await setUp();
      const bodies: Array<[object, string]> = [
        [{ contactId: contact.id }, 'stepId'],
        [{ stepId: 'mail' }, 'contactId'],
        [{ stepId: 'my step', contactId: contact.id }, 'stepId'],
        [{ stepId: 42, contactId: contact.id }, 'stepId'],
        [{ stepId: 'mail', contactId: 'not-a-uuid' }, 'contactId'],
        // An unknown field is a 400 naming it, as on every other operation.
        [{ stepId: 'mail', contactId: contact.id, extra: true }, 'extra'],
      ];
      for (const [body, path] of bodies) {
        const res = await preview(key, sequenceId, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.details[0].path, JSON.stringify(body)).to.equal(path);
      }
      const malformed = await request(previewApp()).post(`/api/v1/sequences/${sequenceId}/preview`).set('x-api-key', key).set('content-type', 'application/json').send('{"stepId": ');
      expect(malformed.status).to.equal(400);
    });

    it('answers 400 naming the field when a template is over its render limits for this contact', async () => {
      const tenant = await buildTenant();
      const created = await api(tenant.key)
        .post('/sequences')
        .send({ name: 'Heavy', steps: [{ id: 'big', type: 'email', subject: 'x', html: '{% for i in (1..100000000) %}{{ i }}{% endfor %}' }] });
      const contact = await buildContact(tenant.accountId);
      const res = await preview(tenant.key, created.body.sequence.id, { stepId: 'big', contactId: contact.id });
      expectError(res, 400, 'validation_failed', /^Step "big": html could not be rendered: line 1, column \d+: memory alloc limit exceeded$/);
      expect(res.body.details[0].path).to.equal('steps.0.html');
    });
  });

  describe('sequences.preview (tRPC)', () => {
    it('answers the same previews over /trpc', async () => {
      const { key, sequenceId, contact } = await setUp({ firstName: 'Ada' });
      const rest = await preview(key, sequenceId, { stepId: 'mail', contactId: contact.id });
      const email = await trpcPreview(key, { id: sequenceId, stepId: 'mail', contactId: contact.id });
      expect(email.status, email.text).to.equal(200);
      expect(email.body.result.data.preview).to.deep.equal(rest.body.preview);
      expect(email.body.result.data.preview.subject).to.equal('Welcome, Ada');
      const chat = await trpcPreview(key, { id: sequenceId, stepId: 'chat', contactId: contact.id });
      expect(chat.status, chat.text).to.equal(200);
      expect(chat.body.result.data.preview.request.template.components[0].parameters[0].text).to.equal('Ada');
    });

    it('refuses the same errors: 404 and 400, through /trpc and in-process', async () => {
      const { key, sequenceId, contact } = await setUp();
      const other = await setUp();
      const missing = await trpcPreview(key, { id: randomUUID(), stepId: 'mail', contactId: contact.id });
      expect(missing.status).to.equal(404);
      expect(missing.body.error.data.code).to.equal('NOT_FOUND');
      const bad = await trpcPreview(key, { id: sequenceId, stepId: 'w', contactId: contact.id });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.data.code).to.equal('BAD_REQUEST');

      await rejectedWith(previewCaller(key).sequences.preview({ id: sequenceId, stepId: 'mail', contactId: other.contact.id }), 'NOT_FOUND', { error: 'Contact not found', code: 'not_found' });
      await rejectedWith(previewCaller(key).sequences.preview({ id: other.sequenceId, stepId: 'mail', contactId: contact.id }), 'NOT_FOUND', { error: 'Sequence not found', code: 'not_found' });
      await badRequest(previewCaller(key).sequences.preview({ id: sequenceId, stepId: 'nope', contactId: contact.id }), 'stepId');
      await badRequest(previewCaller(key).sequences.preview({ id: sequenceId, stepId: 'mail', contactId: 'x' }), 'contactId');
    });
  });
});
