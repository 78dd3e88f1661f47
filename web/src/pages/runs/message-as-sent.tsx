import { None } from '../../components/none';
import type { SentMessage } from './run-data';

const TONE: Record<string, string> = {
  queued: 'pending',
  sending: 'pending',
  sent: 'active',
  captured: 'active',
  // The relay may have it (no answer to its final dot, twice): not known to be sent.
  unconfirmed: 'pending',
  delivered: 'active',
  read: 'active',
  failed: 'failed',
  skipped: 'disabled',
  cancelled: 'disabled',
};

export function MessageStatus({ status }: { status: string }) {
  return <span className={`badge ${TONE[status] ?? 'disabled'}`}>{status[0].toUpperCase() + status.slice(1)}</span>;
}

// A message that will not go out (any more): nothing of it is "not sent yet".
const ENDED_UNSENT = new Set(['skipped', 'cancelled', 'failed']);

type Content = Record<string, unknown>;
const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

// A message of a run as it went out: an email's envelope and its html, rendered in an iframe
// that may run nothing and reach nothing of the dashboard (sandbox=""), or a WhatsApp message's
// request to the Cloud API; with what became of it. Before it is sent, what it will be is not
// known yet (it is rendered when it goes).
export function MessageAsSent({ message, content }: { message: SentMessage; content: Content | undefined }) {
  const email = message.channel === 'email';
  return (
    <section className="message" aria-label={email ? `Email ${message.subject ?? ''}` : 'WhatsApp message'}>
      <dl className="facts message-facts">
        <div>
          <dt>Delivery</dt>
          <dd>
            <MessageStatus status={message.status} />
            {message.error && <span className="message-error"> {message.error}</span>}
          </dd>
        </div>
        {email && (
          <div>
            <dt>From</dt>
            <dd className="mono">{text(content?.from) ?? <None />}</dd>
          </div>
        )}
        <div>
          <dt>To</dt>
          <dd className="mono">{message.to}</dd>
        </div>
        {email && (
          <div>
            <dt>Subject</dt>
            <dd>{text(content?.subject) ?? message.subject ?? <None />}</dd>
          </div>
        )}
      </dl>
      {/* Skipped or cancelled before it went out: it never will, so nothing was rendered. A
          failed one says so, and why, in its Delivery line: nothing more to add. */}
      {!content && (message.status === 'skipped' || message.status === 'cancelled') && <p className="meta">Never sent: nothing was rendered.</p>}
      {!content && !ENDED_UNSENT.has(message.status) && <p className="meta">Not sent yet: the message is rendered when it goes out.</p>}
      {content && email && (
        <iframe className="email-frame" sandbox="" title={`The email as sent: ${message.subject ?? 'no subject'}`} srcDoc={text(content.html) ?? ''} />
      )}
      {content && !email && (
        <pre className="request" tabIndex={0} aria-label="The request sent to WhatsApp">
          {JSON.stringify(content.request ?? content, null, 2)}
        </pre>
      )}
    </section>
  );
}
