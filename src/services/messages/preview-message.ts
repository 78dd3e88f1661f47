import type { Database } from '../../db/database';
import { select } from '../../db/sql/statements';
import { ValidationError } from '../../errors/app-errors';
import type { MessagePreview } from '../../schemas/message-preview';
import type { ChannelSettings } from '../channels/channel-settings';
import { resolveEmailSender } from '../channels/senders';
import { contactFromRow } from '../contacts/contact-row';
import { findContactRow } from '../contacts/find-contact';
import { getSequence } from '../sequences/list-sequences';
import { unsubscribeUrl } from '../unsubscribe/unsubscribe-links';
import { RUN_SELECT, runFromRow, type RunRow } from '../sequences/runs';
import { buildTemplateContext } from './render-context';
import { renderEmail, renderWhatsApp, TemplateRenderError } from './render-message';
import { isMessageStep } from './templates';
import { whatsappRecipient } from './whatsapp-recipient';

// A message step of the sequence's current version, rendered for one contact as the sender
// would render it now: the same templates, variables, sender and headers. Nothing is sent and
// nothing is written. `run` is the contact's latest run in the sequence, if it has one.

export const PREVIEW_CALLBACK_DATA = 'preview';

export async function previewMessage(
  db: Database,
  input: { accountId: string; sequenceId: string; stepId: string; contactId: string },
  settings: ChannelSettings,
): Promise<MessagePreview> {
  const sequence = await getSequence(db, { accountId: input.accountId, id: input.sequenceId });
  const contactRow = await findContactRow(db, { accountId: input.accountId, id: input.contactId });
  const index = sequence.steps.findIndex((step) => step.id === input.stepId);
  const step = sequence.steps[index];
  if (!step || sequence.version === null) {
    throw stepError(`Step "${input.stepId}" is not a step of the sequence's current version${sequence.version === null ? ' (it has no steps)' : ` (${sequence.version})`}`);
  }
  if (!isMessageStep(step)) throw stepError(`Step "${input.stepId}" is a ${step.type} step: only email and whatsapp steps send a message to preview`);

  const [latest] = await select<RunRow>(
    db,
    `${RUN_SELECT} WHERE sequence_id = ? AND contact_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`,
    [sequence.id, contactRow.id],
  );
  const contact = contactFromRow(contactRow);
  const link = unsubscribeUrl(settings, { accountId: input.accountId, contactId: contact.id, channel: step.type });
  const context = buildTemplateContext({
    contact,
    run: latest ? runFromRow(latest) : null,
    sequence: { id: sequence.id, name: sequence.name, version: sequence.version },
    unsubscribeUrl: link,
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
        skipReason: contact.emailSubscriptionStatus === 'unsubscribed' ? 'unsubscribed' : null,
      };
    }
    const recipient = whatsappRecipient(contact.phone);
    return {
      channel: 'whatsapp',
      request: renderWhatsApp(step, context, { to: recipient.ok ? recipient.to : '', callbackData: PREVIEW_CALLBACK_DATA }),
      skipReason: contact.whatsappSubscriptionStatus === 'unsubscribed' ? 'unsubscribed' : recipient.ok ? null : recipient.reason,
    };
  } catch (error) {
    if (!(error instanceof TemplateRenderError)) throw error;
    // Parsed when saved, but over a limit for this contact: the step's field, named as saved.
    const path = `steps.${index}.${error.path}`;
    throw new ValidationError(`Step "${step.id}": ${error.message}`, [{ path, message: `Step "${step.id}": ${error.message}` }]);
  }
}

function stepError(message: string): ValidationError {
  return new ValidationError(message, [{ path: 'stepId', message }]);
}
