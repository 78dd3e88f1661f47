import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ErrorBanner } from '../../../components/error-banner';
import { Field } from '../../../components/field';
import { When } from '../../../components/when';
import { fieldErrors, trpc } from '../../../trpc';
import { useContactWrite, type Contact } from './contact';
import { CustomFieldsInput, CustomFieldsTable, NOT_AN_OBJECT, parseCustomFields } from './custom-fields';

export function FieldsPanel({ contact }: { contact: Contact }) {
  const written = useContactWrite();
  const [fields, setFields] = useState({
    email: contact.email,
    phone: contact.phone ?? '',
    firstName: contact.firstName ?? '',
    lastName: contact.lastName ?? '',
  });
  const initialCustom = JSON.stringify(contact.customFields, null, 2);
  const [custom, setCustom] = useState(initialCustom);
  const [customProblem, setCustomProblem] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const update = useMutation(trpc.dashboard.contacts.update.mutationOptions({ onSuccess: ({ contact }) => { setSaved(true); written(contact); } }));
  const errors = fieldErrors(update.error);
  const set = (name: keyof typeof fields) => (e: { target: { value: string } }) => {
    setSaved(false);
    setFields({ ...fields, [name]: e.target.value });
  };
  // The API's problem with a custom field may name a nested key (customFields.address.city).
  const customError = customProblem ?? Object.entries(errors).find(([path]) => path === 'customFields' || path.startsWith('customFields.'))?.[1];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    // An emptied optional field clears it, as null does in the API.
    const orNull = (value: string) => (value.trim() === '' ? null : value);
    // Custom fields are sent only when edited: the API replaces them whole.
    const customFields = custom === initialCustom ? undefined : parseCustomFields(custom);
    if (customFields === null) {
      setCustomProblem(NOT_AN_OBJECT);
      return;
    }
    setCustomProblem(null);
    update.mutate({
      id: contact.id,
      email: fields.email,
      phone: orNull(fields.phone),
      firstName: orNull(fields.firstName),
      lastName: orNull(fields.lastName),
      ...(customFields && { customFields }),
    });
  };
  return (
    <section className="panel" aria-labelledby="fields-heading">
      <h2 id="fields-heading">Fields</h2>
      <form onSubmit={submit} noValidate>
        <ErrorBanner error={update.error} />
        <Field label="Email" type="email" required value={fields.email} error={errors.email} onChange={set('email')} />
        <Field label="Phone" type="tel" value={fields.phone} error={errors.phone} onChange={set('phone')} />
        <Field label="First name" value={fields.firstName} error={errors.firstName} onChange={set('firstName')} />
        <Field label="Last name" value={fields.lastName} error={errors.lastName} onChange={set('lastName')} />
        <h3 className="label">Custom fields</h3>
        <CustomFieldsTable fields={contact.customFields} />
        <CustomFieldsInput
          value={custom}
          error={customError}
          onChange={(value) => {
            setSaved(false);
            setCustom(value);
          }}
        />
        <p className="meta">
          Created <When iso={contact.createdAt} />; last changed <When iso={contact.updatedAt} />.
        </p>
        <div className="actions start">
          <button type="submit" disabled={update.isPending}>
            Save fields
          </button>
          <span role="status">{saved ? 'Saved.' : ''}</span>
        </div>
      </form>
    </section>
  );
}
