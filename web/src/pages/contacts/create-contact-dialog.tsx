import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Field } from '../../components/field';
import { FormDialog } from '../../components/form-dialog';
import { navigate } from '../../router';
import { fieldErrors, trpc } from '../../trpc';

const EMPTY = { email: '', firstName: '', lastName: '', tags: '' };

// "New contact": the API's create, so its rules and messages; a problem with one tag
// (tags.2) shows at the tags field.
export function CreateContactDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [fields, setFields] = useState(EMPTY);
  const create = useMutation(
    trpc.dashboard.contacts.create.mutationOptions({
      onSuccess: ({ contact }) => {
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.contacts.pathKey() });
        setFields(EMPTY);
        create.reset();
        onClose();
        navigate(`/contacts/${contact.id}`);
      },
    }),
  );
  const errors = fieldErrors(create.error);
  const tagsError = Object.entries(errors).find(([path]) => path === 'tags' || path.startsWith('tags.'))?.[1];
  const set = (name: keyof typeof EMPTY) => (e: { target: { value: string } }) => setFields({ ...fields, [name]: e.target.value });
  const submit = () => {
    const optional = (value: string) => (value.trim() === '' ? undefined : value);
    const tags = fields.tags.split(',').map((tag) => tag.trim()).filter(Boolean);
    create.mutate({
      email: fields.email,
      firstName: optional(fields.firstName),
      lastName: optional(fields.lastName),
      ...(tags.length > 0 && { tags }),
    });
  };
  return (
    <FormDialog open={open} title="New contact" submit="Create contact" action={create} onSubmit={submit} onClose={onClose}>
      <Field label="Email" type="email" required autoComplete="off" value={fields.email} error={errors.email} onChange={set('email')} data-autofocus />
      <Field label="First name (optional)" value={fields.firstName} error={errors.firstName} onChange={set('firstName')} />
      <Field label="Last name (optional)" value={fields.lastName} error={errors.lastName} onChange={set('lastName')} />
      <Field label="Tags (optional)" hint="Separated by commas, e.g. vip, trial." value={fields.tags} error={tagsError} onChange={set('tags')} />
    </FormDialog>
  );
}
