import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { navigate } from '../../router';
import { trpc } from '../../trpc';

// Delete, for a sequence that never had a run (a draft made while trying things): whether it
// had one is asked of its run list (one row is enough). One that has runs is archived instead;
// the service refuses its deletion anyway (409), should a run start meanwhile.
export function DeletePanel({ sequence }: { sequence: { id: string; name: string } }) {
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const runs = useQuery(trpc.dashboard.sequences.runs.queryOptions({ id: sequence.id, limit: 1 }));
  const remove = useMutation(
    trpc.dashboard.sequences.delete.mutationOptions({
      onSuccess: () => {
        queryClient.removeQueries({ queryKey: trpc.dashboard.sequences.get.queryKey({ id: sequence.id }) });
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.sequences.list.queryKey() });
        navigate('/sequences');
      },
    }),
  );
  if (!runs.data) return null;
  const hasRuns = runs.data.runs.length > 0;
  return (
    <section className="panel danger-zone" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete</h2>
      {hasRuns ? (
        <p>This sequence has runs, so it cannot be deleted: archive it instead (Change status above), and it leaves the list.</p>
      ) : (
        <>
          <p>This sequence never had a run: deleting it is permanent, and takes its steps with it.</p>
          <button type="button" className="danger" onClick={() => setConfirming(true)}>
            Delete sequence
          </button>
        </>
      )}
      <ConfirmDialog
        open={confirming}
        title={`Delete ${sequence.name}?`}
        confirm="Delete for good"
        action={remove}
        onConfirm={() => remove.mutate({ id: sequence.id })}
        onClose={() => setConfirming(false)}
      >
        The sequence and its steps will be deleted for good.
      </ConfirmDialog>
    </section>
  );
}
