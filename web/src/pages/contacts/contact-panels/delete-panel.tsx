import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../../components/confirm-dialog';
import { navigate } from '../../../router';
import { trpc } from '../../../trpc';
import type { Contact } from './contact';

export function DeletePanel({ contact }: { contact: Contact }) {
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const remove = useMutation(
    trpc.dashboard.contacts.delete.mutationOptions({
      onSuccess: () => {
        queryClient.removeQueries({ queryKey: trpc.dashboard.contacts.get.queryKey({ id: contact.id }) });
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.contacts.list.queryKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.sequences.pathKey() });
        navigate('/contacts');
      },
    }),
  );
  return (
    <section className="panel danger-zone" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete</h2>
      <p>Deleting a contact is permanent, and deletes its runs with it.</p>
      <button type="button" className="danger" onClick={() => setConfirming(true)}>
        Delete contact
      </button>
      <ConfirmDialog
        open={confirming}
        title={`Delete ${contact.email}?`}
        confirm="Delete for good"
        action={remove}
        onConfirm={() => remove.mutate({ id: contact.id })}
        onClose={() => setConfirming(false)}
      >
        The contact and all its runs will be deleted for good.
      </ConfirmDialog>
    </section>
  );
}
