import { fieldErrors } from '../../trpc';

// A template error as the API gives it (a 400's details: `step.html` or `steps.2.html`, "html
// does not parse: line 3, column 9: …"), by the field of the step it names, with its line.
export interface TemplateError {
  message: string;
  line: number | null;
}

const LINE = /line (\d+), column \d+/;

export function templateErrors(error: unknown): Record<string, TemplateError> {
  return templateErrorsOf(fieldErrors(error));
}

// The same from errors already by path (the builder's, for the step: `html`, `subject`).
export function templateErrorsOf(messages: Record<string, string>): Record<string, TemplateError> {
  const found: Record<string, TemplateError> = {};
  for (const [path, message] of Object.entries(messages)) {
    const field = path.replace(/^steps?\.(\d+\.)?/, '');
    const line = LINE.exec(message);
    found[field] = { message, line: line ? Number(line[1]) : null };
  }
  return found;
}
