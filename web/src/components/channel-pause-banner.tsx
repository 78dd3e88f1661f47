import { useQuery } from '@tanstack/react-query';
import { Link } from '../router';
import { trpc } from '../trpc';
import { When } from './when';

// A paused channel, or one step's paused template (docs/channels.md "What pauses a channel, and
// how it resumes"): said where a person looks, with what failed in our words and how it
// resumes. On Settings -> Channels every pause of the account; on a sequence page the channels
// as a whole and that sequence's steps.

const CHANNEL = { email: 'Email', whatsapp: 'WhatsApp' } as const;

export function ChannelPauseBanners({ sequenceId }: { sequenceId?: string }) {
  const pauses = useQuery(trpc.dashboard.channels.pauses.queryOptions(sequenceId ? { sequenceId } : undefined));
  if (!pauses.data || pauses.data.length === 0) return null;
  return (
    <>
      {pauses.data.map((pause) => (
        <div key={`${pause.channel}-${pause.sequenceId ?? ''}-${pause.stepId ?? ''}`} className="banner warning channel-paused" role="alert">
          {pause.stepId ? (
            <>
              <strong>
                {CHANNEL[pause.channel]} step &ldquo;{pause.stepId}&rdquo; is paused
              </strong>
              : {pause.reason}. Its messages wait, queued; no contact is marked. Fix the step&apos;s template and save the steps to send them
              {sequenceId === pause.sequenceId ? '' : <> (<Link to={`/sequences/${pause.sequenceId}`}>its sequence</Link>)</>}.
            </>
          ) : (
            <>
              <strong>{CHANNEL[pause.channel]} sending is paused</strong>: {pause.reason}, since <When iso={pause.pausedAt} />. Its messages wait,
              queued; no contact is marked. Save the {pause.channel === 'email' ? 'email' : 'WhatsApp'} sender{' '}
              {sequenceId ? <Link to="/settings/channels">in Settings → Channels</Link> : 'below'} to send them
              {pause.nextProbeAt ? (
                <>
                  , or it resumes by itself once a login test succeeds (next <When iso={pause.nextProbeAt} />)
                </>
              ) : null}
              .
            </>
          )}
        </div>
      ))}
    </>
  );
}
