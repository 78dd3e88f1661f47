import { expect } from 'chai';
import type { ContactDto } from '../../../src/schemas/contact';
import type { StepOf } from '../../../src/schemas/sequence-definition';
import { stepInputSchema } from '../../../src/schemas/sequence-definition';
import { buildTemplateContext, type TemplateContext } from '../../../src/services/messages/render-context';
import { renderEmail, renderWhatsApp, TemplateRenderError } from '../../../src/services/messages/render-message';
import { templateParseCount } from '../../../src/services/messages/templates';
import { whatsappRecipient } from '../../../src/services/messages/whatsapp-recipient';
import type { ContactRow } from '../../../src/services/contacts/contact-row';

// Rendering message steps (docs/templates.md): what a recipient would read, for each kind of
// template; the parse cache; the recipient's number. No database: the sender and the preview
// hand these functions the contact, run and sequence they read.

const ADA: ContactDto = {
  id: '3f1c2a9e-6a4b-4a7e-9d1e-2b8f0c4d5e6f',
  email: 'ada@example.com',
  phone: '+44 7700 900123',
  firstName: 'Ada',
  lastName: null,
  tags: ['vip'],
  customFields: { plan: 'pro', address: { city: 'Leeds' } },
  emailSubscriptionStatus: 'subscribed',
  whatsappSubscriptionStatus: 'subscribed',
  createdAt: '2026-11-22T09:30:00.000Z',
  updatedAt: '2026-11-22T09:30:00.000Z',
};

let sequenceCounter = 0;

// A context of a sequence no other test renders, so that each test's cache is its own.
function context(contact: Partial<ContactDto> = {}, version = 1): TemplateContext {
  sequenceCounter += 1;
  return buildTemplateContext({
    contact: { ...ADA, ...contact },
    run: {
      id: 'b2d4f6a8-1c3e-4f5a-8b7c-9d0e1f2a3b4c',
      status: 'running',
      startedAt: '2026-11-22T09:30:00.000Z',
      completedAt: null,
      createdAt: '2026-11-22T09:30:00.000Z',
      version,
      currentStepId: 'mail',
      reason: null,
    },
    sequence: { id: `sequence-${sequenceCounter}`, name: 'Welcome series', version },
    unsubscribeUrl: 'https://contacts.example.com/u/token',
  });
}

// A step as the API stores it: through its schema, as a saved sequence's steps were.
function email(fields: Partial<StepOf<'email'>>): StepOf<'email'> {
  return { ...(stepInputSchema.parse({ type: 'email', subject: 'Hi', html: '<p>Hi</p>', ...fields }) as StepOf<'email'>), id: 'mail' };
}

function whatsapp(texts: string[]): StepOf<'whatsapp'> {
  const step = stepInputSchema.parse({
    type: 'whatsapp',
    template: { name: 'welcome', language: { code: 'en_US' }, components: [{ type: 'body', parameters: texts.map((text) => ({ type: 'text', text })) }] },
  });
  return { ...(step as StepOf<'whatsapp'>), id: 'chat' };
}

describe('message rendering', () => {
  describe('html', () => {
    it('escapes every output: a contact named <script> arrives as text', () => {
      const { html } = renderEmail(email({ html: '<p>Hello {{ contact.firstName }}</p>' }), context({ firstName: '<script>alert("x")</script>' }));
      expect(html).to.equal('<p>Hello &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</p>');
    });

    it('escapes what a filter made too, and the echo tag', () => {
      const step = email({ html: '{{ contact.firstName | upcase }}|{% echo contact.firstName %}|{{ contact.firstName | append: "&" }}' });
      expect(renderEmail(step, context({ firstName: '<b>' })).html).to.equal('&lt;B&gt;|&lt;b&gt;|&lt;b&gt;&amp;');
    });

    it('does not escape an output piped through raw last; raw anywhere else does not count', () => {
      const step = email({ html: '{{ contact.customFields.banner | raw }}|{{ contact.customFields.banner | raw | upcase }}' });
      const { html } = renderEmail(step, context({ customFields: { banner: '<b>Sale</b>' } }));
      expect(html).to.equal('<b>Sale</b>|&lt;B&gt;SALE&lt;/B&gt;');
    });

    it('leaves the template\'s own markup as written', () => {
      const { html } = renderEmail(email({ html: '<a href="{{ unsubscribe_url }}">Unsubscribe</a>' }), context());
      expect(html).to.equal('<a href="https://contacts.example.com/u/token">Unsubscribe</a>');
    });
  });

  describe('subject, text and WhatsApp parameters', () => {
    it('are not escaped', () => {
      const step = email({ subject: 'For {{ contact.firstName }}', text: 'Dear {{ contact.firstName }}' });
      const rendered = renderEmail(step, context({ firstName: 'Tom & <Jerry>' }));
      expect(rendered.subject).to.equal('For Tom & <Jerry>');
      expect(rendered.text).to.equal('Dear Tom & <Jerry>');
      const request = renderWhatsApp(whatsapp(['{{ contact.firstName }}']), context({ firstName: 'Tom & <Jerry>' }), { to: '1', callbackData: 'x' });
      expect(request.template.components![0]!.parameters[0]!.text).to.equal('Tom & <Jerry>');
    });

    it('keeps a subject on one line, whatever a contact field holds', () => {
      const rendered = renderEmail(email({ subject: 'Hi {{ contact.firstName }}' }), context({ firstName: 'Ada\r\nBcc: eve@example.com' }));
      expect(rendered.subject).to.equal('Hi Ada Bcc: eve@example.com');
    });
  });

  describe('variables', () => {
    it('reads the contact as the API shows it, the run, the sequence and the unsubscribe link', () => {
      const step = email({
        text: '{{ contact.firstName }}|{{ contact.email }}|{{ contact.customFields.plan }}|{{ contact.customFields.address.city }}|{{ contact.tags | join: "," }}|{{ run.id }}|{{ run.currentStepId }}|{{ sequence.name }}|{{ sequence.version }}|{{ unsubscribe_url }}',
      });
      expect(renderEmail(step, context()).text).to.equal(
        'Ada|ada@example.com|pro|Leeds|vip|b2d4f6a8-1c3e-4f5a-8b7c-9d0e1f2a3b4c|mail|Welcome series|1|https://contacts.example.com/u/token',
      );
    });

    it('renders a missing variable empty, at any depth', () => {
      const step = email({ subject: 'Hi {{ contact.nickname }}{{ contact.customFields.none.deeper }}{{ nothing }}!' });
      expect(renderEmail(step, context()).subject).to.equal('Hi !');
    });

    it('uses default for a missing, null or empty value, and not for a present one', () => {
      const step = email({ subject: '{{ contact.lastName | default: "friend" }}|{{ contact.customFields.none | default: "none" }}|{{ contact.customFields.empty | default: "empty" }}|{{ contact.firstName | default: "friend" }}' });
      expect(renderEmail(step, context({ customFields: { empty: '' } })).subject).to.equal('friend|none|empty|Ada');
    });

    it('reads only own properties: no constructor, no prototype', () => {
      const step = email({ subject: '[{{ contact.constructor }}][{{ contact.tags.constructor }}][{{ contact.customFields.__proto__ }}][{{ contact.tags.size }}]' });
      expect(renderEmail(step, context()).subject).to.equal('[][][][1]');
    });

    it('takes the contact from its row as from its API shape', () => {
      // As SQLite returns it: JSON columns as text, dates as text.
      const row: ContactRow = {
        id: '5c4b3a29-1e0d-4f8c-9b7a-6d5e4f3a2b1c',
        account_id: 'a',
        email: 'Grace@example.com',
        email_normalized: 'grace@example.com',
        phone: null,
        first_name: 'Grace',
        last_name: null,
        tags: '[]',
        custom_fields: '{"plan":"team"}',
        email_subscription_status: 'subscribed',
        whatsapp_subscription_status: 'subscribed',
        created_at: '2026-11-22 09:30:00.000',
        updated_at: '2026-11-22 09:30:00.000',
      };
      const built = buildTemplateContext({ contact: row, run: null, sequence: { id: 's', name: 'S', version: 1 }, unsubscribeUrl: 'u' });
      expect(built.contact).to.include({ id: row.id, firstName: 'Grace', email: row.email });
      expect(built.contact.customFields).to.deep.equal({ plan: 'team' });
      expect(built.contact).to.not.have.property('email_normalized');
      expect(built.run).to.deep.equal({});
    });
  });

  describe('the text part', () => {
    it('is made from the rendered html when the step has none: links beside their text, no images, headings as written', () => {
      const step = email({ html: '<h1>Hello {{ contact.firstName }}</h1><p>Your plan: <b>{{ contact.customFields.plan }}</b></p><img src="logo.png" alt="Logo"><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>' });
      expect(renderEmail(step, context()).text).to.equal('Hello Ada\n\nYour plan: pro\n\nUnsubscribe [https://contacts.example.com/u/token]');
    });

    it('shows an escaped value as the contact wrote it', () => {
      expect(renderEmail(email({ html: '<p>{{ contact.firstName }}</p>' }), context({ firstName: 'Tom & <Jerry>' })).text).to.equal('Tom & <Jerry>');
    });
  });

  describe('WhatsApp', () => {
    it('answers the Cloud API\'s request body, parameters rendered, with the recipient and the message id given', () => {
      const step = stepInputSchema.parse({
        type: 'whatsapp',
        template: {
          name: 'order_update',
          language: { code: 'en_US', policy: 'deterministic' },
          components: [
            { type: 'header', parameters: [{ type: 'text', text: '{{ contact.firstName }}' }] },
            { type: 'body', parameters: [{ type: 'text', text: '{{ contact.customFields.plan | upcase }}', parameter_name: 'plan' }, { type: 'text', text: '{{ sequence.name }}' }] },
            { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '{{ contact.id }}' }] },
          ],
        },
      }) as StepOf<'whatsapp'>;
      const request = renderWhatsApp({ ...step, id: 'chat' }, context(), { to: '447700900123', callbackData: 'message-1' });
      expect(request).to.deep.equal({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: '447700900123',
        type: 'template',
        template: {
          name: 'order_update',
          language: { code: 'en_US', policy: 'deterministic' },
          components: [
            { type: 'header', parameters: [{ type: 'text', text: 'Ada' }] },
            { type: 'body', parameters: [{ type: 'text', text: 'PRO', parameter_name: 'plan' }, { type: 'text', text: 'Welcome series' }] },
            { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: ADA.id }] },
          ],
        },
        biz_opaque_callback_data: 'message-1',
      });
    });

    it('sends no components for a template without parameters', () => {
      const step = { ...(stepInputSchema.parse({ type: 'whatsapp', template: { name: 'hello_world', language: { code: 'en' } } }) as StepOf<'whatsapp'>), id: 'chat' };
      expect(renderWhatsApp(step, context(), { to: '1', callbackData: 'x' }).template).to.deep.equal({ name: 'hello_world', language: { code: 'en' } });
    });

    it('turns line breaks, tabs and long runs of spaces in a parameter into what WhatsApp accepts', () => {
      const request = renderWhatsApp(whatsapp(['{{ contact.customFields.note }}']), context({ customFields: { note: 'one\ntwo\t\tthree      four' } }), { to: '1', callbackData: 'x' });
      expect(request.template.components![0]!.parameters[0]!.text).to.equal('one two three    four');
    });

    it('reads the recipient\'s number as E.164 digits, or says why it cannot', () => {
      expect(whatsappRecipient('+44 7700 900123')).to.deep.equal({ ok: true, to: '447700900123' });
      expect(whatsappRecipient('+1 (415) 555-0100')).to.deep.equal({ ok: true, to: '14155550100' });
      expect(whatsappRecipient('0044.7700.900123')).to.deep.equal({ ok: true, to: '447700900123' });
      expect(whatsappRecipient(null)).to.deep.equal({ ok: false, reason: 'no_phone' });
      expect(whatsappRecipient('   ')).to.deep.equal({ ok: false, reason: 'no_phone' });
      for (const phone of ['07700 900123', '+0 7700 900123', '+44 7700 900123 ext 4', '+123', '+1234567890123456', 'call me']) {
        expect(whatsappRecipient(phone), phone).to.deep.equal({ ok: false, reason: 'invalid_phone' });
      }
    });
  });

  describe('the parse cache', () => {
    it('parses a step\'s templates once for its sequence and version, however many contacts it renders for', () => {
      const step = email({ subject: 'Hi {{ contact.firstName }}', html: '<p>{{ contact.email }}</p>', text: 'Plan {{ contact.customFields.plan }}' });
      const ctx = context();
      const before = templateParseCount();
      for (let i = 0; i < 500; i += 1) {
        const rendered = renderEmail(step, { ...ctx, contact: { ...ctx.contact, firstName: `Contact ${i}` } });
        expect(rendered.subject).to.equal(`Hi Contact ${i}`);
      }
      expect(templateParseCount() - before).to.equal(3);
      const whatsappStep = whatsapp(['{{ contact.firstName }}', '{{ contact.email }}']);
      for (let i = 0; i < 500; i += 1) renderWhatsApp(whatsappStep, ctx, { to: '1', callbackData: `m${i}` });
      expect(templateParseCount() - before).to.equal(5);
    });

    it('parses again for another version, or another text under the same key', () => {
      const step = email({ subject: 'A {{ contact.firstName }}' });
      const ctx = context();
      const before = templateParseCount();
      renderEmail(step, ctx);
      renderEmail(step, { ...ctx, sequence: { ...ctx.sequence, version: 2 } });
      expect(templateParseCount() - before).to.equal(4);
      const changed = email({ subject: 'B {{ contact.firstName }}' });
      expect(renderEmail(changed, ctx).subject).to.equal('B Ada');
      expect(templateParseCount() - before).to.equal(6);
    });
  });

  describe('limits', () => {
    it('stops a template that would build too much, naming the field', () => {
      const step = email({ html: '{% for i in (1..100000000) %}{{ i }}{% endfor %}' });
      expect(() => renderEmail(step, context()))
        .to.throw(TemplateRenderError)
        .with.property('message')
        .that.matches(/^html could not be rendered: line 1, column \d+: memory alloc limit exceeded$/);
      expect(() => renderEmail(step, context())).to.throw(TemplateRenderError).with.property('overTime', false);
    });

    it('stops a template that renders for too long', () => {
      const step = email({ text: '{% for i in (1..2000) %}{% for j in (1..2000) %}{{ j }}{% endfor %}{% endfor %}' });
      expect(() => renderEmail(step, context()))
        .to.throw(TemplateRenderError)
        .with.property('message')
        .that.matches(/^text could not be rendered: line 1, column \d+: template render limit exceeded$/);
      // Wall-clock time: a sender tries it again rather than failing the run at once.
      expect(() => renderEmail(step, context())).to.throw(TemplateRenderError).with.property('overTime', true);
    });
  });
});
