import { compile } from 'html-to-text';
import type { StepOf } from '../../schemas/sequence-definition';
import { LruMap } from '../lru-map';
import { liquidFor, type ParsedTemplate } from './liquid';
import type { TemplateContext } from './render-context';
import { describeLiquidError, parseTemplate, problemText, templateFields, type MessageStep, type TemplateField } from './templates';

// Renders a message step for one contact: the email's subject, html and text, or the WhatsApp
// Cloud API's request body. The sender calls these for every message and the preview for one,
// so a step's templates are parsed once per (sequence, version, step) and kept, the least
// recently used dropped first: a version's steps never change.

const MAX_CACHED_STEPS = 2_000;

interface ParsedStep {
  fields: TemplateField[];
  parsed: ParsedTemplate[];
}

const parsedSteps = new LruMap<string, ParsedStep>(MAX_CACHED_STEPS);

// A template that parsed when it was saved but cannot be rendered for this contact: over the
// render limits (docs/templates.md "Limits"), or a filter that fails on this contact's value.
export class TemplateRenderError extends Error {
  // Over the time limit only: wall-clock time, which a busy machine or a garbage collection can
  // stretch for a template that renders in a fraction of it otherwise. A sender tries such a
  // message again on the retry schedule; any other render error is the template's for good.
  readonly overTime: boolean;

  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(`${path} could not be rendered: ${detail}`);
    this.name = 'TemplateRenderError';
    this.overTime = /render limit exceeded/i.test(detail);
  }
}

function parsedStep(step: MessageStep, context: TemplateContext): ParsedStep {
  const key = `${context.sequence.id}/${context.sequence.version}/${step.id}`;
  const fields = templateFields(step);
  const known = parsedSteps.get(key);
  // The same texts: what is kept was parsed from this step (the same strings, usually the
  // same objects, so the comparison costs nothing).
  if (known && known.fields.length === fields.length && known.fields.every((field, i) => field.source === fields[i]!.source)) {
    return known;
  }
  const parsed = { fields, parsed: fields.map((field) => parseTemplate(field)) };
  parsedSteps.set(key, parsed);
  return parsed;
}

function renderAll(step: MessageStep, context: TemplateContext): Map<string, string> {
  const { fields, parsed } = parsedStep(step, context);
  const rendered = new Map<string, string>();
  fields.forEach((field, i) => {
    try {
      rendered.set(field.path, liquidFor(field.kind).renderSync(parsed[i]!, context) as string);
    } catch (error) {
      throw new TemplateRenderError(field.path, problemText(describeLiquidError(error)));
    }
  });
  return rendered;
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

// Links kept beside their text ("Unsubscribe [https://…]"), images left out, headings as
// written (html-to-text upper-cases them by default). Lines are not wrapped: a third of the
// cost (bench/render.ts), a link never broken from its text, and the transfer encoding keeps
// long lines within SMTP's limits.
const htmlToText = compile({
  wordwrap: false,
  selectors: [
    { selector: 'img', format: 'skip' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
  ],
});

export function renderEmail(step: StepOf<'email'>, context: TemplateContext): RenderedEmail {
  const rendered = renderAll(step, context);
  const html = rendered.get('html')!;
  return {
    // A header is one line: a line break from a contact's field must not start another header.
    subject: oneLine(rendered.get('subject')!),
    html,
    text: rendered.get('text') ?? htmlToText(html),
  };
}

export interface WhatsAppRequest {
  messaging_product: 'whatsapp';
  recipient_type: 'individual';
  to: string;
  type: 'template';
  template: {
    name: string;
    language: { code: string; policy?: 'deterministic' };
    components?: Array<{
      type: 'header' | 'body' | 'button';
      sub_type?: 'url';
      index?: string;
      parameters: Array<{ type: 'text'; text: string; parameter_name?: string }>;
    }>;
  };
  biz_opaque_callback_data: string;
}

// The body of POST /{phoneNumberId}/messages. envelope: the recipient in E.164 digits
// (whatsapp-recipient.ts) and the message's id, which status webhooks carry back.
export function renderWhatsApp(
  step: StepOf<'whatsapp'>,
  context: TemplateContext,
  envelope: { to: string; callbackData: string },
): WhatsAppRequest {
  const rendered = renderAll(step, context);
  const { name, language, components } = step.template;
  const template: WhatsAppRequest['template'] = { name, language: { ...language } };
  if (components) {
    template.components = components.map((component, c) => ({
      ...component,
      parameters: component.parameters.map((parameter, p) => ({
        ...parameter,
        text: parameterText(rendered.get(`template.components.${c}.parameters.${p}.text`)!),
      })),
    }));
  }
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: envelope.to,
    type: 'template',
    template,
    biz_opaque_callback_data: envelope.callbackData,
  };
}

function oneLine(value: string): string {
  return value.replace(/[\r\n]+/g, ' ').trim();
}

// WhatsApp refuses a parameter with a line break, a tab or more than four spaces in a row
// (error 132018): those become single spaces rather than a failed message.
function parameterText(value: string): string {
  return value.replace(/[\r\n\t]+/g, ' ').replace(/ {5,}/g, '    ').trim();
}
