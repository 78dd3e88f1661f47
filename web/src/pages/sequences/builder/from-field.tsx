import { useQuery } from '@tanstack/react-query';
import { Field } from '../../../components/field';
import { Link } from '../../../router';
import { trpc } from '../../../trpc';

// An email step's From. Left empty, the step is sent from the account's sender (or the
// server's EMAIL_FROM): the hint names that address, or says there is none, since an active
// sequence cannot be saved with an email step that has no sender at all (a 409,
// sender_required, docs/sequences.md "Email and WhatsApp steps").
export function FromField({ value, error, onChange }: { value: string; error?: string; onChange: (from: string) => void }) {
  const channel = useQuery(trpc.dashboard.channels.email.queryOptions());
  const sender = channel.data?.from ?? null;
  const hint = channel.isPending ? null : sender ? (
    <>Empty: the account&apos;s sender, {sender}.</>
  ) : (
    <>
      This account has no sender yet: give a From here, or set one in <Link to="/settings/channels">Settings → Channels</Link>. Without either, the
      sequence cannot be made active.
    </>
  );
  return <Field label="From (optional)" hint={hint} value={value} error={error} onChange={(e) => onChange(e.target.value)} />;
}
