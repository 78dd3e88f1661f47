// npm run bench:render: the cost of rendering a message step per contact (docs/templates.md
// "Cost"), as the sender pays it: templates parsed once per (sequence, version, step) and kept
// (src/services/messages/render-message.ts), then rendered for each contact. Beside it, the same
// work parsing every time, which is what the cache saves. Pure CPU: no database, no network.
//
//   npm run bench:render                 # 20,000 messages per case
//   BENCH_RENDER_MESSAGES=2000 npm run bench:render
import { performance } from 'node:perf_hooks';
import type { ContactDto } from '../src/schemas/contact';
import { stepInputSchema, type StepOf } from '../src/schemas/sequence-definition';
import { liquidFor } from '../src/services/messages/liquid';
import { buildTemplateContext, type TemplateContext } from '../src/services/messages/render-context';
import { renderEmail, renderWhatsApp } from '../src/services/messages/render-message';
import { parseTemplate, templateFields, templateParseCount } from '../src/services/messages/templates';

const MESSAGES = Number(process.env.BENCH_RENDER_MESSAGES ?? 20_000);

// A newsletter-sized email: a few kilobytes of markup, a dozen outputs, a condition and a loop.
const HTML = `<!doctype html><html><body style="font-family: sans-serif">
<table role="presentation" width="100%"><tr><td>
<h1>Hello {{ contact.firstName | default: "there" }}!</h1>
<p>Thanks for joining {{ sequence.name }}. You are on the <b>{{ contact.customFields.plan | default: "free" | capitalize }}</b> plan.</p>
{% if contact.customFields.plan == "pro" %}<p>As a Pro member you get priority support.</p>{% else %}<p>Upgrade to Pro for priority support.</p>{% endif %}
<ul>{% for tag in contact.tags %}<li>{{ tag }}</li>{% endfor %}</ul>
${'<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>\n'.repeat(20)}
<p>Your city: {{ contact.customFields.address.city | default: "unknown" }}</p>
<p><a href="https://shop.example/account?c={{ contact.id }}">Your account</a></p>
<p style="font-size: 12px"><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>
</td></tr></table></body></html>`;

const email = (text?: string) =>
  ({ id: 'mail', ...stepInputSchema.parse({ type: 'email', subject: 'Welcome, {{ contact.firstName | default: "friend" }}', html: HTML, ...(text ? { text } : {}) }) }) as StepOf<'email'>;

const whatsapp = {
  id: 'chat',
  ...stepInputSchema.parse({
    type: 'whatsapp',
    template: {
      name: 'order_update',
      language: { code: 'en_US' },
      components: [
        { type: 'header', parameters: [{ type: 'text', text: '{{ contact.firstName | default: "there" }}' }] },
        { type: 'body', parameters: [{ type: 'text', text: '{{ contact.customFields.plan | upcase }}' }, { type: 'text', text: '{{ sequence.name }}' }] },
      ],
    },
  }),
} as StepOf<'whatsapp'>;

function contexts(n: number): TemplateContext[] {
  return Array.from({ length: n }, (_, i) => {
    const contact: ContactDto = {
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      email: `contact-${i}@example.com`,
      phone: `+4477009${String(i).padStart(5, '0')}`,
      firstName: i % 10 === 0 ? null : `Contact <${i}>`,
      lastName: 'Lovelace',
      tags: ['newsletter', i % 2 ? 'vip' : 'trial'],
      customFields: { plan: i % 3 ? 'pro' : 'free', address: { city: 'Leeds' } },
      emailSubscriptionStatus: 'subscribed',
      whatsappSubscriptionStatus: 'subscribed',
      createdAt: '2026-11-22T09:30:00.000Z',
      updatedAt: '2026-11-22T09:30:00.000Z',
    };
    return buildTemplateContext({
      contact,
      run: null,
      sequence: { id: 'bench-sequence', name: 'Welcome series', version: 1 },
      unsubscribeUrl: `https://contacts.example.com/u/${'x'.repeat(80)}${i}`,
    });
  });
}

// parses: templates parsed for the case, its warm-up included.
function measure(name: string, render: (context: TemplateContext, i: number) => unknown, all: TemplateContext[]): number {
  const parsesBefore = templateParseCount();
  for (let i = 0; i < Math.min(500, all.length); i += 1) render(all[i]!, i); // warm-up
  const started = performance.now();
  for (let i = 0; i < all.length; i += 1) render(all[i]!, i);
  const micros = ((performance.now() - started) * 1000) / all.length;
  const parses = templateParseCount() - parsesBefore;
  console.log(`${name.padEnd(58)} ${micros.toFixed(1).padStart(8)} µs/message  ${Math.round(1e6 / micros).toString().padStart(7)} messages/s  parses: ${parses}`);
  return micros;
}

// Rendering as if nothing were kept: each field parsed again for every message.
function uncachedEmail(step: StepOf<'email'>, context: TemplateContext) {
  const out: Record<string, string> = {};
  for (const field of templateFields(step)) {
    out[field.path] = liquidFor(field.kind).renderSync(parseTemplate(field), context) as string;
  }
  return out;
}

// Steps as a saved version holds them: made once, as the versions' cache keeps them.
const emailWithText = email('Hello {{ contact.firstName }}, see {{ unsubscribe_url }}');
const emailWithoutText = { ...email(), id: 'mail-html' };
const all = contexts(MESSAGES);
console.log(`Rendering ${MESSAGES.toLocaleString('en')} messages per case (html ${HTML.length.toLocaleString('en')} characters), Node ${process.version}\n`);
const withText = measure('email, text part given (subject + html + text)', (c) => renderEmail(emailWithText, c), all);
measure('email, text part made from the html (html-to-text)', (c) => renderEmail(emailWithoutText, c), all);
measure('whatsapp, 3 parameters', (c, i) => renderWhatsApp(whatsapp, c, { to: '447700900123', callbackData: `m${i}` }), all);
const some = all.slice(0, Math.max(1, Math.floor(MESSAGES / 10)));
const uncached = measure('email, text given, parsed for every message (no cache)', (c) => uncachedEmail(emailWithText, c), some);
console.log(`\nThe cache makes an email with its text part ${(uncached / withText).toFixed(1)} times cheaper to render.`);
