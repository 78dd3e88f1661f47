import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../../../src/routers/app-router';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { ErrorBanner } from '../error-banner';
import { fieldErrors, trpc } from '../../trpc';
import type { MessageStepInput, PreviewContact } from './message-types';

type PreviewOf = inferRouterOutputs<AppRouter>['dashboard']['messages']['preview']['preview'];

const WIDTHS = { desktop: { label: 'Desktop', px: 800 }, phone: { label: 'Phone', px: 375 } } as const;

// The contact to preview for, found by the start of their email.
export function ContactPicker({ chosen, onChoose }: { chosen: PreviewContact | null; onChoose: (contact: PreviewContact) => void }) {
  const [q, setQ] = useState('');
  const id = useId();
  const found = useQuery({
    ...trpc.dashboard.contacts.list.queryOptions({ q: q.trim(), limit: 5 }),
    enabled: q.trim().length > 0,
    placeholderData: keepPreviousData,
  });
  return (
    <div className="field contact-picker">
      <label htmlFor={id}>Preview for the contact</label>
      <input id={id} type="search" value={q} placeholder="Start of an email address" autoComplete="off" onChange={(event) => setQ(event.target.value)} />
      {q.trim() && found.data && (
        <ul className="picks" aria-label="Matching contacts">
          {found.data.contacts.length === 0 && <li className="meta">No contact's email starts with that.</li>}
          {found.data.contacts.map((contact) => (
            <li key={contact.id}>
              <button
                type="button"
                className={`link-button${chosen?.id === contact.id ? ' chosen' : ''}`}
                aria-pressed={chosen?.id === contact.id}
                onClick={() => onChoose({ id: contact.id, email: contact.email, customFields: (contact.customFields ?? {}) as Record<string, unknown> })}
              >
                {contact.email}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

// What the step would send to the contact now, from the service's preview with the step as
// edited: re-asked a moment after each change. The html in an iframe that runs nothing
// (sandbox=""), at a desktop or a phone width.
export function MessagePreview({
  sequenceId,
  stepId,
  step,
  contact,
  onError,
}: {
  sequenceId: string;
  stepId: string;
  step: MessageStepInput;
  contact: PreviewContact | null;
  onError: (error: unknown) => void;
}) {
  // The last preview that rendered stays in view while the next is asked for, or fails.
  const [shown, setShown] = useState<PreviewOf | null>(null);
  const preview = useMutation(
    trpc.dashboard.messages.preview.mutationOptions({
      onSuccess: (answer) => {
        setShown(answer.preview);
        onError(null);
      },
      onError,
    }),
  );
  const [width, setWidth] = useState<keyof typeof WIDTHS>('desktop');
  const { mutate } = preview;
  const body = JSON.stringify(step);
  useEffect(() => {
    if (!contact) return;
    const timer = setTimeout(() => mutate({ sequenceId, stepId, contactId: contact.id, step: JSON.parse(body) }), 400);
    return () => clearTimeout(timer);
  }, [mutate, sequenceId, stepId, contact, body]);

  if (!contact) return <p className="meta">Choose a contact to see the message as they would get it.</p>;
  const data = shown;
  return (
    <div className="message-preview" aria-busy={preview.isPending}>
      {/* A template error is shown at its field and line, above; anything else here. */}
      {preview.isError && Object.keys(fieldErrors(preview.error)).length === 0 && <ErrorBanner error={preview.error} />}
      {preview.isError && Object.keys(fieldErrors(preview.error)).length > 0 && shown && (
        <p className="banner warning">The templates do not parse: this is the last version that did.</p>
      )}
      {data?.skipReason && (
        <p className="banner warning">
          Not sent to this contact now: <strong>{data.skipReason.replace('_', ' ')}</strong>.
        </p>
      )}
      {data?.channel === 'email' && (
        <>
          <dl className="facts message-facts">
            <div>
              <dt>From</dt>
              <dd className="mono">{data.from}</dd>
            </div>
            <div>
              <dt>To</dt>
              <dd className="mono">{data.to}</dd>
            </div>
            <div>
              <dt>Subject</dt>
              <dd data-testid="preview-subject">{data.subject}</dd>
            </div>
          </dl>
          <fieldset className="widths">
            <legend className="visually-hidden">Preview width</legend>
            {(Object.keys(WIDTHS) as Array<keyof typeof WIDTHS>).map((key) => (
              <label key={key} className="choice">
                <input type="radio" name={`width-${stepId}`} checked={width === key} onChange={() => setWidth(key)} />
                {WIDTHS[key].label} ({WIDTHS[key].px} px)
              </label>
            ))}
          </fieldset>
          <div className="frame-box" role="group" aria-label="The rendered email" tabIndex={0}>
            <iframe
              className="preview-frame"
              sandbox=""
              title={`Preview of the email at ${WIDTHS[width].label.toLowerCase()} width`}
              srcDoc={data.html}
              style={{ width: `${WIDTHS[width].px}px` }}
            />
          </div>
          <details className="text-part">
            <summary>Plain-text part</summary>
            <pre tabIndex={0}>{data.text}</pre>
          </details>
        </>
      )}
      {data?.channel === 'whatsapp' && (
        <pre className="request" tabIndex={0} aria-label="The request that would be sent to WhatsApp">
          {JSON.stringify(data.request, null, 2)}
        </pre>
      )}
      {!data && !preview.isError && <p role="status">Rendering the preview…</p>}
      {data && <p className="visually-hidden" role="status">{preview.isPending ? 'Updating the preview…' : 'Preview up to date.'}</p>}
    </div>
  );
}
