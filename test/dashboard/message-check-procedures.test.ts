import { expect } from 'chai';
import { buildUser, dashboardApp, mutate, signInCookie } from '../support/dashboard';
import { buildTenant } from '../support/factories';

// dashboard.messages.check: the message editor's check as a template is typed, with no preview
// contact: the step's templates parsed as a save parses them, a parse error named by its field
// and line.

describe('dashboard.messages.check', () => {
  async function setUp() {
    const tenant = await buildTenant();
    const user = await buildUser(tenant.accountId);
    const app = dashboardApp();
    const cookie = await signInCookie(app, user.email);
    return (input: Record<string, unknown>, withCookie = cookie) => mutate(app, 'dashboard.messages.check', { stepId: 'hello', ...input }, withCookie);
  }

  it('answers ok for templates that parse', async () => {
    const check = await setUp();
    const res = await check({ step: { type: 'email', subject: 'Hi {{ contact.firstName }}', html: '<p>Hi</p>' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.result.data).to.deep.equal({ ok: true });
  });

  it('names each template that does not parse, with its line, for email and WhatsApp steps', async () => {
    const check = await setUp();
    const email = await check({ step: { type: 'email', subject: 'Hi {{ contact.firstName', html: '<p>a</p>\n{% if contact.firstName %}open' } });
    expect(email.status).to.equal(400);
    expect(email.body.error.data.details.map((d: { path: string }) => d.path)).to.deep.equal(['step.subject', 'step.html']);
    expect(email.body.error.data.details[1].message).to.equal('html does not parse: line 2, column 1: tag {% if contact.firstName %} not closed');
    const whatsapp = await check({
      step: { type: 'whatsapp', template: { name: 'order_update', language: { code: 'en' }, components: [{ type: 'header', parameters: [{ type: 'text', text: '{{ contact.firstName' }] }] } },
    });
    expect(whatsapp.status).to.equal(400);
    expect(whatsapp.body.error.data.details[0].path).to.equal('step.template.components.0.parameters.0.text');
  });

  it('needs a session', async () => {
    const check = await setUp();
    const res = await check({ step: { type: 'email', subject: 'Hi', html: '<p>Hi</p>' } }, '');
    expect(res.status).to.equal(401);
  });
});
