import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ConfirmDialog } from '../../../components/confirm-dialog';
import { trpc } from '../../../trpc';
import type { Contact } from './contact';

export type Leaving = { sequenceId: string; name: string };

export function UnenrollDialog({ contact, leaving, onClose }: { contact: Contact; leaving: Leaving | null; onClose: () => void }) {
  const queryClient = useQueryClient();
  const unenroll = useMutation(
    trpc.dashboard.contacts.unenroll.mutationOptions({
      onSuccess: async () => {
        await Promise.all([
          queryClient.invalidateQueries({ queryKey: trpc.dashboard.contacts.runs.queryKey() }),
          queryClient.invalidateQueries({ queryKey: trpc.dashboard.sequences.pathKey() }),
          queryClient.invalidateQueries({ queryKey: trpc.dashboard.account.get.queryKey() }),
        ]);
        unenroll.reset();
        onClose();
      },
    }),
  );
  return (
    <ConfirmDialog
      open={leaving !== null}
      title={`Unenroll from “${leaving?.name ?? ''}”?`}
      confirm="Cancel the run"
      action={unenroll}
      onConfirm={() => leaving && unenroll.mutate({ id: contact.id, sequenceId: leaving.sequenceId })}
      onClose={onClose}
    >
      The active run of {contact.email} in this sequence will be cancelled. This cannot be undone; the contact can be enrolled again
      later.
    </ConfirmDialog>
  );
}
