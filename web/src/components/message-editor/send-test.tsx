import { useMutation } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { ErrorBanner } from '../error-banner';
import { fieldErrors, trpc } from '../../trpc';
import type { MessageStepInput, PreviewContact } from './message-types';

// "Send a test": the step as edited, rendered for the preview's contact, sent once to the
// address typed here through the account's sender (dashboard.messages.sendTest). It is recorded
// as a test, never as a run's message. Email steps only.
export function SendTest({ sequenceId, stepId, step, contact }: { sequenceId: string; stepId: string; step: MessageStepInput; contact: PreviewContact }) {
  const [to, setTo] = useState('');
  const id = useId();
  const send = useMutation(trpc.dashboard.messages.sendTest.mutationOptions());
  const toError = send.isError ? fieldErrors(send.error).to : undefined;
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
        The message as rendered for <span className="mono">{contact.email}</span>, through the account's sender. Its links are that contact's: its unsubscribe link unsubscribes them.
      </p>
      <div className="field">
        <label htmlFor={`${id}-to`}>Send to</label>
        <div className="send-test-row">
          <input
            id={`${id}-to`}
            type="email"
            required
            value={to}
            autoComplete="email"
            placeholder="you@example.com"
            aria-invalid={toError ? true : undefined}
            aria-describedby={toError ? `${id}-to-error` : undefined}
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
          {send.data.test.status === 'sent'
            ? `Test sent to ${send.data.test.to}: “${send.data.test.subject}” (${send.data.test.response ?? 'accepted'}).`
            : `No SMTP server is set: the test to ${send.data.test.to} was written to ${send.data.test.captured}.`}
        </p>
      )}
    </form>
  );
}
