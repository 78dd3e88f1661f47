import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorBanner } from '../../components/error-banner';
import { trpc } from '../../trpc';
import type { RunDetail } from './run-data';

// Pause, resume and cancel: the API's pause and resume, and the unenroll of the run's contact
// (a contact has one active run per sequence). Each refreshes whatever shows runs.
export function RunActions({ run, label }: { run: RunDetail; label: string }) {
  const client = useQueryClient();
  const done = () => {
    void client.invalidateQueries({ queryKey: trpc.dashboard.runs.get.queryKey({ id: run.id }) });
    void client.invalidateQueries({ queryKey: trpc.dashboard.contacts.runs.pathKey() });
    void client.invalidateQueries({ queryKey: trpc.dashboard.sequences.runs.pathKey() });
  };
  const pause = useMutation(trpc.dashboard.runs.pause.mutationOptions({ onSuccess: done }));
  const resume = useMutation(trpc.dashboard.runs.resume.mutationOptions({ onSuccess: done }));
  const cancel = useMutation(trpc.dashboard.runs.cancel.mutationOptions({ onSuccess: () => (done(), setCancelling(false)) }));
  const [cancelling, setCancelling] = useState(false);
  const ids = { id: run.id, sequenceId: run.sequenceId };
  const canPause = run.status === 'pending' || run.status === 'running';
  const active = canPause || run.status === 'paused';
  if (!active) return null;
  return (
    <>
      <div className="run-actions">
        {canPause && (
          <button type="button" className="secondary" disabled={pause.isPending} onClick={() => pause.mutate(ids)}>
            Pause<span className="visually-hidden"> {label}</span>
          </button>
        )}
        {run.status === 'paused' && (
          <button type="button" className="secondary" disabled={resume.isPending} onClick={() => resume.mutate(ids)}>
            Resume<span className="visually-hidden"> {label}</span>
          </button>
        )}
        <button type="button" className="danger" onClick={() => setCancelling(true)}>
          Cancel run<span className="visually-hidden"> {label}</span>
        </button>
      </div>
      <ErrorBanner error={pause.error ?? resume.error} />
      <ConfirmDialog
        open={cancelling}
        title="Cancel this run?"
        confirm="Cancel run"
        action={cancel}
        onConfirm={() => cancel.mutate({ ...ids, contactId: run.contactId })}
        onClose={() => setCancelling(false)}
      >
        The run stops where it is and takes no further step; a send not yet made is not made. This cannot be undone, but the contact can be
        enrolled again.
      </ConfirmDialog>
    </>
  );
}
