import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { CloseButton, Dialog } from '../../components/dialog';
import { ErrorBanner } from '../../components/error-banner';
import { SelectField } from '../../components/select-field';
import { Link } from '../../router';
import { fieldErrors, trpc } from '../../trpc';

export type Enrollee = { id: string; email: string };

const REASONS: Record<string, string> = {
  not_found: 'no longer a contact of this account',
  sequence_limit_reached: "over the account's active-run limit",
  exit_rule_met: "already meets one of the sequence's exit rules",
};

// Enrolls one contact (from its page) or the selected ones (from the list) in an active
// sequence, then says what happened to each: enrolled, skipped (already running in it), or
// failed, with the reason the service gives.
export function EnrollDialog({ open, contacts, onClose }: { open: boolean; contacts: Enrollee[]; onClose: () => void }) {
  const queryClient = useQueryClient();
  const active = useQuery({ ...trpc.dashboard.sequences.list.queryOptions({ limit: 200, status: 'active' }), enabled: open });
  const [chosen, setChosen] = useState('');
  const enroll = useMutation(
    trpc.dashboard.sequences.enroll.mutationOptions({
      onSuccess: () =>
        Promise.all([
          queryClient.invalidateQueries({ queryKey: trpc.dashboard.contacts.runs.queryKey() }),
          queryClient.invalidateQueries({ queryKey: trpc.dashboard.sequences.pathKey() }),
          queryClient.invalidateQueries({ queryKey: trpc.dashboard.account.get.queryKey() }),
        ]),
    }),
  );
  const sequences = active.data?.sequences ?? [];
  const sequenceId = chosen || sequences[0]?.id || '';
  const errors = fieldErrors(enroll.error);
  const who = contacts.length === 1 ? contacts[0]!.email : `${contacts.length} contacts`;
  const close = () => {
    enroll.reset();
    setChosen('');
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    enroll.mutate({ id: sequenceId, contactIds: contacts.map((c) => c.id) });
  };
  const emails = new Map(contacts.map((c) => [c.id.toLowerCase(), c.email]));
  const summary = enroll.data?.summary;
  const name = sequences.find((s) => s.id === sequenceId)?.name ?? 'the sequence';

  return (
    <Dialog open={open} title={summary ? `Enrolled in “${name}”` : `Enroll ${who} in a sequence`} onClose={close}>
      {summary ? (
        <>
          <div role="status" aria-label="Enrollment summary">
            <ul className="summary">
              <li>
                Enrolled: <strong>{summary.successful}</strong>
              </li>
              <li>
                Skipped (already in it): <strong>{summary.skipped}</strong>
              </li>
              <li>
                Failed: <strong>{summary.failed}</strong>
              </li>
            </ul>
          </div>
          {summary.failures.length > 0 && (
            <ul className="failures" aria-label="Failures">
              {summary.failures.map((failure) => (
                <li key={failure.contactId}>
                  <code>{emails.get(failure.contactId.toLowerCase()) ?? failure.contactId}</code>: {REASONS[failure.reason] ?? failure.reason}
                </li>
              ))}
            </ul>
          )}
          <CloseButton label="Done" onClose={close} />
        </>
      ) : active.isPending ? (
        <p role="status">Loading active sequences…</p>
      ) : sequences.length === 0 ? (
        <>
          <p>
            No sequence is active: only an active sequence accepts enrollments. Activate one on the <Link to="/sequences">Sequences</Link> page.
          </p>
          <CloseButton label="Close" onClose={close} />
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          <ErrorBanner error={enroll.error ?? active.error} />
          <SelectField
            label="Sequence"
            options={sequences.map((s) => [s.id, s.name] as const)}
            value={sequenceId}
            error={errors.id ?? errors.contactIds}
            onChange={(e) => setChosen(e.target.value)}
            data-autofocus
          />
          <p className="hint">Only active sequences are listed. A contact already running in the sequence is skipped.</p>
          <div className="actions">
            <button type="button" className="secondary" onClick={close}>
              Cancel
            </button>
            <button type="submit" disabled={enroll.isPending}>
              Enroll
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
