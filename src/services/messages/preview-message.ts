import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { ValidationError } from '../../errors/app-errors';
import type { MessagePreview } from '../../schemas/message-preview';
import type { StepInput } from '../../schemas/sequence-definition';
import type { ChannelSettings } from '../channels/channel-settings';
import { resolveEmailSender } from '../channels/senders';
import { contactFromRow } from '../contacts/contact-row';
import { findContactRow } from '../contacts/find-contact';
import { getSequence } from '../sequences/list-sequences';
import { unsubscribeUrl } from '../unsubscribe/unsubscribe-links';
import { RUN_COLUMNS_READ, runFromRow, type RunRow } from '../runs/runs';
import { readSnapshot } from '../activities/activity-snapshot';
import { buildTemplateContext } from './render-context';
import { renderEmail, renderWhatsApp, TemplateRenderError } from './render-message';
import { isMessageStep, problemText, templateProblems, type MessageStep } from './templates';
import { whatsappRecipient } from './whatsapp-recipient';
import { findSuppression, normalizeSuppressionAddress } from '../suppressions/suppression-store';

// A message step of the sequence's current version, rendered for one contact as the sender
// would render it now: the same templates, variables, sender and headers. Nothing is sent and
// nothing is written. `run` is the contact's latest run in the sequence, if it has one.
// With `draft` (the dashboard's message editor), the step as it is being edited is rendered in
// its place, saved or not: its templates are parsed first, and one that does not parse is a 400
// naming the field and the line (`step.html`), as saving it would be.

export const PREVIEW_CALLBACK_DATA = 'preview';

export async function previewMessage(
  db: Database,
  input: { accountId: string; sequenceId: string; stepId: string; contactId: string; draft?: StepInput },
  settings: ChannelSettings,
): Promise<MessagePreview> {
  const sequence = await getSequence(db, { accountId: input.accountId, id: input.sequenceId });
  const contactRow = await findContactRow(db, { accountId: input.accountId, id: input.contactId });
  const index = sequence.steps.findIndex((step) => step.id === input.stepId);
  const step = input.draft ? checkDraftStep(input.stepId, input.draft) : sequence.steps[index];
  if (!step || (sequence.version === null && !input.draft)) {
    throw stepError(`Step "${input.stepId}" is not a step of the sequence's current version${sequence.version === null ? ' (it has no steps)' : ` (${sequence.version})`}`);
  }
  if (!isMessageStep(step)) throw stepError(`Step "${input.stepId}" is a ${step.type} step: only email and whatsapp steps send a message to preview`);

  // The contact's latest run: its fields, and the activities it read (trigger, waited).
  const [latest] = await select<RunRow & { trigger_activity: string | null; waited_activity: string | null }>(
    db,
    `SELECT ${RUN_COLUMNS_READ}, trigger_activity, waited_activity FROM sequence_runs WHERE sequence_id = ? AND contact_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`,
    [sequence.id, contactRow.id],
  );
  const contact = contactFromRow(contactRow);
  const link = unsubscribeUrl(settings, { accountId: input.accountId, contactId: contact.id, channel: step.type });
  const context = buildTemplateContext({
    contact,
    run: latest ? runFromRow(latest) : null,
    sequence: { id: sequence.id, name: sequence.name, version: sequence.version ?? 0 },
    unsubscribeUrl: link,
    activities: latest ? { trigger: readSnapshot(latest.trigger_activity), waited: readSnapshot(latest.waited_activity) } : undefined,
  });
  try {
    if (step.type === 'email') {
      const sender = await resolveEmailSender(db, input.accountId, settings);
      const replyTo = step.replyTo ?? sender.replyTo;
      const headers: Record<string, string> = {
        'List-Unsubscribe': `<${link}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      };
      if (replyTo) headers['Reply-To'] = replyTo;
      return {
        channel: 'email',
        // Empty when neither the step, the account nor EMAIL_FROM gives one: the send would fail.
        from: step.from ?? sender.from ?? '',
        to: contact.email,
        ...renderEmail(step, context),
        headers,
        skipReason:
          contact.emailSubscriptionStatus === 'unsubscribed' ? 'unsubscribed' : (await suppressed(db, input.accountId, 'email', normalizeSuppressionAddress('email', contact.email))) ? 'suppressed' : null,
      };
    }
    const recipient = whatsappRecipient(contact.phone);
    return {
      channel: 'whatsapp',
      request: renderWhatsApp(step, context, { to: recipient.ok ? recipient.to : '', callbackData: PREVIEW_CALLBACK_DATA }),
      skipReason:
        contact.whatsappSubscriptionStatus === 'unsubscribed'
          ? 'unsubscribed'
          : !recipient.ok
            ? recipient.reason
            : (await suppressed(db, input.accountId, 'whatsapp', `+${recipient.to}`))
              ? 'suppressed'
              : null,
    };
  } catch (error) {
    if (!(error instanceof TemplateRenderError)) throw error;
    // Parsed when saved, but over a limit for this contact: the step's field, named as saved.
    const path = input.draft ? `step.${error.path}` : `steps.${index}.${error.path}`;
    throw new ValidationError(`Step "${step.id}": ${error.message}`, [{ path, message: `Step "${step.id}": ${error.message}` }]);
  }
}

// On the account's suppression list for the channel, as the sender checks when the message goes.
async function suppressed(db: Database, accountId: string, channel: 'email' | 'whatsapp', address: string | null): Promise<boolean> {
  return address !== null && (await findSuppression(db, accountId, { channel, address })) !== null;
}

// The step being edited, with the id it is previewed under; its templates must parse. Also the
// message editor's check as it is typed in (dashboard.messages.check), with no contact chosen:
// a template that does not parse is a 400 naming the field and the line (`step.html`).
export function checkDraftStep(stepId: string, draft: StepInput): StepInput & { id: string } {
  const step = { ...draft, id: stepId } as StepInput & { id: string };
  if (!isMessageStep(step)) return step;
  const problems = templateProblems(step as MessageStep);
  if (problems.length > 0) {
    const details = problems.map((problem) => ({ path: `step.${problem.path}`, message: `${problem.path} does not parse: ${problemText(problem)}` }));
    throw new ValidationError(`Step "${stepId}": ${details[0]!.message}`, details);
  }
  return step;
}

function stepError(message: string): ValidationError {
  return new ValidationError(message, [{ path: 'stepId', message }]);
}
