import { expect } from 'chai';
import { caller } from '../support/app';
import { buildUser, dashboardApp, mutate, signInCookie } from '../support/dashboard';
import { buildContact, buildTenant } from '../support/factories';
import { channelSettings } from '../support/channels';

// dashboard.messages.preview: the API's preview with the step as it is being edited (the message
// editor's live preview). Its templates are parsed first: one that does not parse is a 400 that
// names the field and the line, and a step that is not a step is refused by the API's rules.

describe('dashboard.messages.preview', () => {
  async function setUp() {
    const tenant = await buildTenant();
    const { sequence } = await caller(tenant.key).sequences.create({
      name: 'Welcome',
      status: 'active',
      steps: [{ id: 'hello', type: 'email', subject: 'Saved, {{ contact.firstName }}', html: '<p>Saved</p>' }],
    });
    const contact = await buildContact(tenant.accountId, { email: 'ada@example.com', firstName: 'Ada' });
    const user = await buildUser(tenant.accountId);
    // Previews carry the signed unsubscribe link: a secrets key, as a server has.
    const app = dashboardApp({ channels: channelSettings() });
    const cookie = await signInCookie(app, user.email);
    const preview = (input: Record<string, unknown>) => mutate(app, 'dashboard.messages.preview', { sequenceId: sequence.id, stepId: 'hello', contactId: contact.id, ...input }, cookie);
    return { tenant, sequence, contact, preview };
  }

  it('renders the step as edited for the contact, not the saved one, and saves nothing', async () => {
    const { tenant, sequence, preview } = await setUp();
    const res = await preview({ step: { type: 'email', subject: 'Edited, {{ contact.firstName }}', html: '<p>Hi {{ contact.firstName }}</p>' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.result.data.preview).to.include({ channel: 'email', to: 'ada@example.com', subject: 'Edited, Ada', html: '<p>Hi Ada</p>' });
    const saved = await preview({});
    expect(saved.body.result.data.preview).to.include({ subject: 'Saved, Ada', html: '<p>Saved</p>' });
    expect((await caller(tenant.key).sequences.get({ id: sequence.id })).sequence.steps[0]).to.include({ subject: 'Saved, {{ contact.firstName }}' });
  });

  it('answers a template that does not parse with a 400 naming the field and its line', async () => {
    const { preview } = await setUp();
    const res = await preview({ step: { type: 'email', subject: 'Hi', html: '<p>a</p>\n<p>b</p>\n{% if contact.firstName %}open' } });
    expect(res.status).to.equal(400);
    expect(res.body.error.data.details).to.deep.equal([
      { path: 'step.html', message: 'html does not parse: line 3, column 1: tag {% if contact.firstName %} not closed' },
    ]);
  });

  it('refuses a step of an unknown type by the API\'s rules, and another account\'s sequence is not found', async () => {
    const { preview, contact } = await setUp();
    const unknown = await preview({ step: { type: 'fax', number: '1' } });
    expect(unknown.status).to.equal(400);
    const other = await buildTenant();
    const { sequence: theirs } = await caller(other.key).sequences.create({
      name: 'Theirs',
      status: 'active',
      steps: [{ id: 'hello', type: 'email', subject: 'x', html: 'x' }],
    });
    const foreign = await preview({ sequenceId: theirs.id, contactId: contact.id });
    expect(foreign.status).to.equal(404);
  });
});
