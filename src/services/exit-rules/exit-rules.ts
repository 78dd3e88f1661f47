import type { ExitRule } from '../../schemas/sequence-definition';
import type { SubscriptionStatus } from '../../schemas/statuses';

// A sequence's exit rules against a contact (docs/sequences.md "Exit rules"): pure, for the
// contact writers (a change that makes a rule hold cancels the run at once) and for the engine
// (checked again before every step).

export interface ContactFacts {
  tags: readonly string[];
  emailSubscriptionStatus: SubscriptionStatus;
  whatsappSubscriptionStatus: SubscriptionStatus;
}

export function matchingExitRule(rules: readonly ExitRule[], contact: ContactFacts): ExitRule | null {
  for (const rule of rules) {
    if ('tag' in rule && contact.tags.includes(rule.tag)) return rule;
    if ('unsubscribed' in rule) {
      const status = rule.unsubscribed === 'email' ? contact.emailSubscriptionStatus : contact.whatsappSubscriptionStatus;
      if (status === 'unsubscribed') return rule;
    }
  }
  return null;
}

// The run's `reason`, as the API shows it.
export function exitReason(rule: ExitRule): string {
  return 'tag' in rule ? `exitWhen: the contact got the tag "${rule.tag}"` : `exitWhen: the contact unsubscribed from ${rule.unsubscribed}`;
}

// Whether a change could make some rule hold that did not before: a tag gained, or a channel
// unsubscribed. Most writes do neither, and cost no look at the runs.
export function couldTriggerExit(before: ContactFacts | null, after: ContactFacts): boolean {
  if (!before) return false;
  if (after.tags.some((tag) => !before.tags.includes(tag))) return true;
  return (
    (after.emailSubscriptionStatus === 'unsubscribed' && before.emailSubscriptionStatus !== 'unsubscribed') ||
    (after.whatsappSubscriptionStatus === 'unsubscribed' && before.whatsappSubscriptionStatus !== 'unsubscribed')
  );
}
