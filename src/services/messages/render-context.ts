import type { ContactDto } from '../../schemas/contact';
import type { RunDto } from '../../schemas/sequence';
import { contactFromRow, type ContactRow } from '../contacts/contact-row';
import { templateActivity, type ActivitySnapshot } from '../activities/activity-snapshot';

// What a message template reads (docs/templates.md "Variables"): the contact as the API shows it
// (`contact.firstName`, `contact.customFields.plan`), its run, the sequence, and the link that
// unsubscribes the contact from the step's channel; for a run started by an activity, that
// activity (`trigger.properties.total`), and the activity that last ended one of its wait_for
// steps (`waited.properties`): empty objects when there is none.

export interface RunActivities {
  trigger: ActivitySnapshot | null;
  waited: ActivitySnapshot | null;
}

export const NO_ACTIVITIES: RunActivities = { trigger: null, waited: null };

export interface TemplateSequence {
  id: string;
  name: string;
  // The version whose steps are rendered: with the sequence's id, the key parsed templates are
  // kept under (a version's steps never change).
  version: number;
}

export interface TemplateContext {
  contact: ContactDto;
  // The run's API fields; empty (every `run.*` renders empty) in a preview for a contact that
  // has never been enrolled.
  run: Partial<RunDto>;
  sequence: TemplateSequence;
  unsubscribe_url: string;
  trigger: Partial<ActivitySnapshot>;
  waited: Partial<ActivitySnapshot>;
}

export function buildTemplateContext(input: {
  contact: ContactRow | ContactDto;
  run: RunDto | null;
  sequence: TemplateSequence;
  unsubscribeUrl: string;
  activities?: RunActivities;
}): TemplateContext {
  const contact = 'email_normalized' in input.contact ? contactFromRow(input.contact) : input.contact;
  const { id, name, version } = input.sequence;
  const activities = input.activities ?? NO_ACTIVITIES;
  return {
    contact,
    run: input.run ?? {},
    sequence: { id, name, version },
    unsubscribe_url: input.unsubscribeUrl,
    trigger: templateActivity(activities.trigger),
    waited: templateActivity(activities.waited),
  };
}
