import { expect } from 'chai';
import { caller } from '../support/app';
import { buildTenant } from '../support/factories';
import { storedVersions } from '../support/sequence-definitions';

// Email and WhatsApp steps as sequences.create and sequences.update take them (docs/sequences.md
// "Email and WhatsApp steps"): what is accepted is stored and answered as sent. What is refused,
// and that nothing is stored then: the shared bad definitions (test/support/sequence-definitions.ts).

const EMAIL_MINIMAL = { id: 'hello', type: 'email', subject: 'Hi', html: '<p>Hi</p>' };
const EMAIL_FULL = {
  id: 'welcome',
  type: 'email',
  subject: 'Welcome, {{ contact.firstName | default: "friend" }}'.padEnd(998, '!'),
  html: `<p>Hello {{ contact.firstName }}</p>{{ contact.customFields.banner | raw }}{% if contact.customFields.plan == "pro" %}<p>Pro</p>{% endif %}<a href="{{ unsubscribe_url }}">Unsubscribe</a>${' '.repeat(10_000)}`,
  text: 'Hello {{ contact.firstName }}\n{% for tag in contact.tags %}{{ tag }} {% endfor %}\n{{ unsubscribe_url }}',
  from: 'Shop Team <news@shop.example>',
  replyTo: 'help@shop.example',
};
const WHATSAPP_MINIMAL = { id: 'ping', type: 'whatsapp', template: { name: 'hello_world', language: { code: 'en' } } };
const WHATSAPP_FULL = {
  id: 'order',
  type: 'whatsapp',
  template: {
    name: 'order_update_2',
    language: { code: 'pt_BR', policy: 'deterministic' },
    components: [
      { type: 'header', parameters: [{ type: 'text', text: '{{ contact.firstName | default: "there" }}' }] },
      { type: 'body', parameters: [{ type: 'text', text: '{{ contact.customFields.order }}', parameter_name: 'order_id' }, { type: 'text', text: '{{ sequence.name }}' }] },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '{{ contact.id }}' }] },
    ],
  },
};

describe('sequences.create and sequences.update: email and whatsapp steps', () => {
  it('accepts each shape, at its size limits, and answers and stores the steps as sent', async () => {
    const { key } = await buildTenant();
    const steps = [EMAIL_MINIMAL, EMAIL_FULL, WHATSAPP_MINIMAL, WHATSAPP_FULL];
    expect(EMAIL_FULL.subject).to.have.length(998);
    const { sequence } = await caller(key).sequences.create({ name: 'Messages', steps } as never);
    expect(sequence.steps).to.deep.equal(steps);
    expect((await caller(key).sequences.get({ id: sequence.id })).sequence.steps).to.deep.equal(steps);
    expect((await storedVersions(sequence.id)).map((v) => v.steps)).to.deep.equal([steps]);
  });

  it('takes an html of exactly 100 KiB', async () => {
    const { key } = await buildTenant();
    const html = `<p>{{ contact.email }}</p>${'x'.repeat(100 * 1024 - 26)}`;
    expect(html).to.have.length(100 * 1024);
    const { sequence } = await caller(key).sequences.create({ name: 'Big', steps: [{ type: 'email', subject: 'Big', html }] } as never);
    expect((sequence.steps[0] as { html: string }).html).to.equal(html);
  });

  it('parses the templates again on a change: the same steps keep the version, a broken template changes nothing', async () => {
    const { key } = await buildTenant();
    const { sequence } = await caller(key).sequences.create({ name: 'Messages', steps: [EMAIL_FULL, WHATSAPP_FULL] } as never);
    const same = await caller(key).sequences.update({ id: sequence.id, steps: [EMAIL_FULL, WHATSAPP_FULL].map(({ id: _id, ...step }) => step) } as never);
    expect(same.sequence.version).to.equal(1);
    const broken = { ...EMAIL_FULL, text: 'Hello\n\n{% for tag in contact.tags %}' };
    const refused = await caller(key)
      .sequences.update({ id: sequence.id, steps: [broken, WHATSAPP_FULL] } as never)
      .then(() => null, (error: Error) => error);
    expect(refused?.message).to.equal('Step "welcome": text does not parse: line 3, column 1: tag {% for tag in contact.tags %} not closed');
    expect((await storedVersions(sequence.id)).map((v) => v.version)).to.deep.equal([1]);
  });

  it('trims from and replyTo as it stores them', async () => {
    const { key } = await buildTenant();
    const { sequence } = await caller(key).sequences.create({ name: 'Trim', steps: [{ ...EMAIL_MINIMAL, from: '  news@shop.example ', replyTo: ' Help <help@shop.example>' }] } as never);
    expect(sequence.steps[0]).to.include({ from: 'news@shop.example', replyTo: 'Help <help@shop.example>' });
  });
});
