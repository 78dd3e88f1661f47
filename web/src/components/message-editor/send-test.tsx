import { useMutation } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { ErrorBanner } from '../error-banner';
import { fieldErrors, trpc } from '../../trpc';
import type { MessageStepInput, PreviewContact } from './message-types';

// "Send a test": the step as edited, rendered for the preview's contact, sent once to the
// address typed here (an email address, or a WhatsApp number) through the account's sender
// (dashboard.messages.sendTest). It is recorded as a test, never as a run's message.
export function SendTest({ sequenceId, stepId, step, contact }: { sequenceId: string; stepId: string; step: MessageStepInput; contact: PreviewContact }) {
  const [to, setTo] = useState('');
  const id = useId();
  const send = useMutation(trpc.dashboard.messages.sendTest.mutationOptions());
  const toError = send.isError ? fieldErrors(send.error).to : undefined;
  const whatsapp = step.type === 'whatsapp';
  return (
    <form
      className="send-test"
      aria-labelledby={`${id}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        send.mutate({ sequenceId, stepId, contactId: contact.id, step, to: to.trim() });
      }}
    >
      <h4 id={`${id}-title`}>Send a test</h4>
      <p className="meta">
        {whatsapp ? (
          <>
            The template message as rendered for <span className="mono">{contact.email}</span>, to the WhatsApp number typed here, through the account's WhatsApp number.
          </>
        ) : (
          <>
            The message as rendered for <span className="mono">{contact.email}</span>, through the account's sender. Its links are that contact's: its unsubscribe link unsubscribes them.
          </>
        )}
      </p>
      <div className="field">
        <label htmlFor={`${id}-to`}>{whatsapp ? 'Send to the WhatsApp number' : 'Send to'}</label>
        {whatsapp && (
          <p className="hint" id={`${id}-to-hint`}>
            In international form, with its country code: +44 7700 900123.
          </p>
        )}
        <div className="send-test-row">
          <input
            id={`${id}-to`}
            type={whatsapp ? 'tel' : 'email'}
            required
            value={to}
            autoComplete={whatsapp ? 'tel' : 'email'}
            placeholder={whatsapp ? '+44 7700 900123' : 'you@example.com'}
            aria-invalid={toError ? true : undefined}
            aria-describedby={[whatsapp ? `${id}-to-hint` : '', toError ? `${id}-to-error` : ''].filter(Boolean).join(' ') || undefined}
            onChange={(event) => setTo(event.target.value)}
          />
          <button type="submit" disabled={send.isPending || to.trim() === ''}>
            {send.isPending ? 'Sending…' : 'Send a test'}
          </button>
        </div>
        {toError && (
          <p className="error" id={`${id}-to-error`}>
            {toError}
          </p>
        )}
      </div>
      {send.isError && !toError && <ErrorBanner error={send.error} />}
      {send.isSuccess && (
        <p className="banner success" role="status">
          {sentWords(send.data.test)}
        </p>
      )}
    </form>
  );
}

type Sent = { channel: 'email' | 'whatsapp'; status: 'sent' | 'captured'; to: string; subject: string | null; response: string | null; captured: string | null };

function sentWords(test: Sent): string {
  if (test.channel === 'whatsapp') {
    return test.status === 'sent'
      ? `Test sent to WhatsApp number +${test.to} (${test.response ?? 'accepted by WhatsApp'}).`
      : `The account has no WhatsApp token: the test to +${test.to} was written to ${test.captured}.`;
  }
  return test.status === 'sent'
    ? `Test sent to ${test.to}: “${test.subject}” (${test.response ?? 'accepted'}).`
    : `No SMTP server is set: the test to ${test.to} was written to ${test.captured}.`;
}
