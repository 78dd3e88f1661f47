// A Liquid template as a person reads it: its text, with each output ({{ … }}) a variable named in
// words ("first name") and each tag ({% … %}) a short word ("if plan", "end"). The builder, the
// version diff and the run timeline show a message's subject so (step-text.tsx draws the
// variables as chips); in plain text a variable is written in brackets: "Welcome, [first name]!".

export type TemplatePart = { text: string } | { variable: string };

const NAMED: Record<string, string> = {
  'contact.firstName': 'first name',
  'contact.lastName': 'last name',
  'contact.email': 'email address',
  'contact.phone': 'phone number',
  'contact.timeZone': 'time zone',
  unsubscribe_url: 'unsubscribe link',
};
const OWNER: Record<string, string> = { contact: '', trigger: "trigger's ", waited: "activity's " };

// "cartId", "cart_id" read "cart id".
function words(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_.-]+/g, ' ')
    .toLowerCase()
    .trim();
}

// What an output reads as: its value before any filter ("| default: …" is how it is written, not
// what it says).
export function variableInWords(expression: string): string {
  const value = expression.split('|')[0]!.trim();
  if (NAMED[value]) return NAMED[value]!;
  const quoted = /^(["'])(.*)\1$/.exec(value);
  if (quoted) return quoted[2]!;
  const path = /^(contact|trigger|waited)\.(?:(?:customFields|properties)\.)?([A-Za-z0-9_.-]+)$/.exec(value);
  if (path) return `${OWNER[path[1]!]}${words(path[2]!)}`;
  return value;
}

function tagInWords(markup: string): string {
  const [name = '', ...rest] = markup.trim().split(/\s+/);
  const operand = rest.join(' ');
  if (name === 'if' || name === 'elsif' || name === 'unless') return `${name === 'elsif' ? 'else if' : name} ${variableInWords(operand)}`;
  if (name === 'for') return `for each ${variableInWords(operand.replace(/^\S+\s+in\s+/, ''))}`;
  if (name.startsWith('end')) return 'end';
  return name;
}

const MARKUP = /\{\{-?([\s\S]*?)-?\}\}|\{%-?([\s\S]*?)-?%\}/g;

export function templateParts(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  const text = (value: string) => {
    if (!value) return;
    const last = parts[parts.length - 1];
    if (last && 'text' in last) last.text += value;
    else parts.push({ text: value });
  };
  let at = 0;
  for (const match of template.matchAll(MARKUP)) {
    text(template.slice(at, match.index));
    if (match[1] !== undefined) parts.push({ variable: variableInWords(match[1]) });
    else {
      const tag = tagInWords(match[2]!);
      if (tag) parts.push({ variable: tag });
    }
    at = match.index + match[0].length;
  }
  // What is left, an unclosed "{{" too, as written: a template that does not parse shows itself.
  text(template.slice(at));
  return parts;
}

export function partsInWords(parts: readonly TemplatePart[]): string {
  return parts.map((part) => ('text' in part ? part.text : `[${part.variable}]`)).join('');
}

export function templateInWords(template: string): string {
  return partsInWords(templateParts(template));
}
