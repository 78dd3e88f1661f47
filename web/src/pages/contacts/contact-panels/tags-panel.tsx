import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ErrorBanner } from '../../../components/error-banner';
import { Field } from '../../../components/field';
import { fieldErrors, trpc } from '../../../trpc';
import { useContactWrite, type Contact } from './contact';

export function TagsPanel({ contact }: { contact: Contact }) {
  const written = useContactWrite();
  const [tag, setTag] = useState('');
  const add = useMutation(
    trpc.dashboard.contacts.addTags.mutationOptions({
      onSuccess: ({ contact }) => {
        setTag('');
        written(contact);
      },
    }),
  );
  const remove = useMutation(trpc.dashboard.contacts.removeTags.mutationOptions({ onSuccess: ({ contact }) => written(contact) }));
  const errors = fieldErrors(add.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    remove.reset();
    add.mutate({ id: contact.id, tags: [tag] });
  };
  // A problem with the new tag shows at its field instead.
  const failed = Object.keys(errors).length === 0 ? (add.error ?? remove.error) : null;
  return (
    <section className="panel" aria-labelledby="tags-heading">
      <h2 id="tags-heading">Tags</h2>
      <ErrorBanner error={failed} />
      {contact.tags.length === 0 ? (
        <p className="hint">No tags.</p>
      ) : (
        <ul className="tags" aria-label="Tags of this contact">
          {contact.tags.map((t) => (
            <li key={t} className="tag">
              {t}
              <button type="button" className="link" aria-label={`Remove tag ${t}`} disabled={remove.isPending} onClick={() => remove.mutate({ id: contact.id, tags: [t] })}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <form className="inline-form" onSubmit={submit} noValidate>
        <Field label="New tag" value={tag} maxLength={64} error={errors['tags.0'] ?? errors.tags} onChange={(e) => setTag(e.target.value)} />
        <button type="submit" disabled={add.isPending}>
          Add tag
        </button>
      </form>
    </section>
  );
}
