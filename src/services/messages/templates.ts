import type { Step, StepInput, StepOf } from '../../schemas/sequence-definition';
import { liquidFor, type ParsedTemplate, type TemplateKind } from './liquid';

// Which texts of a message step are templates, and how each is parsed: when the sequence is
// saved (definition-rules.ts, where a syntax error is a 400 naming the step, the field and the
// line) and when a message is rendered (render-message.ts, which keeps what it parsed).

export interface TemplateField {
  // Where the text is in the step: `html`, `template.components.0.parameters.1.text`.
  path: string;
  source: string;
  // html: every output HTML-escaped unless piped through `raw`; plain: as rendered.
  kind: TemplateKind;
}

export type MessageStep = StepOf<'email'> | StepOf<'whatsapp'>;

export function isMessageStep(step: Step | StepInput): step is MessageStep {
  return step.type === 'email' || step.type === 'whatsapp';
}

export function templateFields(step: Pick<MessageStep, 'type'> & Partial<MessageStep>): TemplateField[] {
  if (step.type === 'email') {
    const email = step as StepOf<'email'>;
    const fields: TemplateField[] = [
      { path: 'subject', source: email.subject, kind: 'plain' },
      { path: 'html', source: email.html, kind: 'html' },
    ];
    if (email.text !== undefined) fields.push({ path: 'text', source: email.text, kind: 'plain' });
    return fields;
  }
  const { template } = step as StepOf<'whatsapp'>;
  return (template.components ?? []).flatMap((component, c) =>
    component.parameters.map((parameter, p) => ({
      path: `template.components.${c}.parameters.${p}.text`,
      source: parameter.text,
      kind: 'plain' as const,
    })),
  );
}

// Counted so that what the cache saves can be seen (test/services/messages, bench/render.ts).
let parses = 0;

export function templateParseCount(): number {
  return parses;
}

export function parseTemplate(field: TemplateField): ParsedTemplate {
  parses += 1;
  return liquidFor(field.kind).parse(field.source);
}

export interface TemplateProblem {
  path: string;
  // What liquidjs said, without its own position suffix.
  problem: string;
  line: number | null;
  column: number | null;
}

// The first problem of each template of the step that does not parse.
export function templateProblems(step: MessageStep): TemplateProblem[] {
  const problems: TemplateProblem[] = [];
  for (const field of templateFields(step)) {
    try {
      parseTemplate(field);
    } catch (error) {
      problems.push({ path: field.path, ...describeLiquidError(error) });
    }
  }
  return problems;
}

const POSITION = /, line:(\d+), col:(\d+)$/;

export function describeLiquidError(error: unknown): Omit<TemplateProblem, 'path'> {
  const message = error instanceof Error ? error.message : String(error);
  const token = (error as { token?: { getPosition?: () => [number, number] } }).token;
  const position = typeof token?.getPosition === 'function' ? token.getPosition() : null;
  const found = POSITION.exec(message);
  return {
    problem: message.replace(POSITION, ''),
    line: position?.[0] ?? (found ? Number(found[1]) : null),
    column: position?.[1] ?? (found ? Number(found[2]) : null),
  };
}

export function problemText(problem: Omit<TemplateProblem, 'path'>): string {
  return problem.line === null ? problem.problem : `line ${problem.line}, column ${problem.column}: ${problem.problem}`;
}
