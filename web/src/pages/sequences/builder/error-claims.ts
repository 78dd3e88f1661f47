import type { Step } from '../step-words';

// The paths inside a step each form shows at a field; any other error of the step is shown
// above its form.
export function claimsError(step: Step, path: string): boolean {
  if (path === 'id') return true;
  const type = step.type as string;
  // Only the body's parameters have fields; a header's or a button's error is shown above.
  if (type === 'whatsapp') {
    const components = (step as Extract<Step, { type: 'whatsapp' }>).template?.components ?? [];
    const body = components.findIndex((c) => c.type === 'body');
    const parameter = /^template\.components\.(\d+)\.parameters\.\d+\.text$/.exec(path);
    if (parameter) return Number(parameter[1]) === body;
  }
  const claimed: Record<string, RegExp> = {
    wait: /^(duration|until(\.time|\.weekdays(\.\d+)?)?)$/,
    tag: /^(add|remove)(\.\d+)?$/,
    update: /^customFields(\..*)?$/,
    webhook: /^(endpointId|payload)(\..*)?$/,
    email: /^(subject|html|text|from|replyTo|category)$/,
    whatsapp: /^(template\.(name|language(\.code)?|components\.\d+\.parameters\.\d+\.text)|category)$/,
    branch: /^(if(\..*)?|then|else)$/,
    wait_for: /^(activity|match(\..*)?|timeout|next|onTimeout)$/,
    split: /^variants(\.\d+\.(id|weight|next))?$/,
  };
  return claimed[type]?.test(path) ?? false;
}
