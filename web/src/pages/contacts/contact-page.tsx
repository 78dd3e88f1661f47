import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Dialog } from '../../components/dialog';
import { Field } from '../../components/field';
import { Pager } from '../../components/pager';
import { SelectField } from '../../components/select-field';
import { useCursorPages } from '../../components/use-cursor-pages';
import { When } from '../../components/when';
import { Link, navigate } from '../../router';
import { errorMessage, fieldErrors, trpc } from '../../trpc';
import { RunStatus } from '../sequences/run-status';

type Contact = NonNullable<ReturnType<typeof useContact>['data']>['contact'];
type Subscription = Contact['emailSubscriptionStatus'];

const ACTIVE = new Set(['pending', 'running', 'paused']);
const SUBSCRIPTION = [
  ['subscribed', 'Subscribed'],
  ['unsubscribed', 'Unsubscribed'],
] as const;

function useContact(id: string) {
  return useQuery(trpc.dashboard.contacts.get.queryOptions({ id }));
}

// Every change answers with the contact as stored: put it in the cache, and refresh the lists.
function useContactWrite() {
  const queryClient = useQueryClient();
  return (contact: Contact) => {
    queryClient.setQueryData(trpc.dashboard.contacts.get.queryKey({ id: contact.id }), { contact });
    void queryClient.invalidateQueries({ queryKey: trpc.dashboard.contacts.list.queryKey() });
  };
}

export function ContactPage({ id }: { id: string }) {
  const contact = useContact(id);
  if (contact.isPending) return <p role="status">Loading the contact…</p>;
  if (contact.isError) {
    return (
      <>
        <p role="alert" className="banner error">
          {errorMessage(contact.error)}
        </p>
        <Link to="/contacts">Back to contacts</Link>
      </>
    );
  }
  const c = contact.data.contact;
  return (
    <>
      <p className="crumbs">
        <Link to="/contacts">Contacts</Link> / <span className="mono">{c.email}</span>
      </p>
      <div className="panels">
        <FieldsPanel contact={c} key={c.id} />
        <div>
          <TagsPanel contact={c} />
          <SubscriptionsPanel contact={c} key={c.updatedAt} />
        </div>
      </div>
      <RunsPanel contact={c} />
      <DeletePanel contact={c} />
    </>
  );
}

function FieldsPanel({ contact }: { contact: Contact }) {
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
    let customFields: Record<string, unknown> | undefined;
    if (custom !== initialCustom) {
      try {
        customFields = JSON.parse(custom.trim() === '' ? '{}' : custom) as Record<string, unknown>;
      } catch {
        customFields = undefined;
      }
      if (!customFields || typeof customFields !== 'object' || Array.isArray(customFields)) {
        setCustomProblem('Must be a JSON object, e.g. {"plan": "pro"}');
        return;
      }
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
        {update.isError && (
          <p className="banner error" role="alert">
            {errorMessage(update.error)}
          </p>
        )}
        <Field label="Email" type="email" required value={fields.email} error={errors.email} onChange={set('email')} />
        <Field label="Phone" type="tel" value={fields.phone} error={errors.phone} onChange={set('phone')} />
        <Field label="First name" value={fields.firstName} error={errors.firstName} onChange={set('firstName')} />
        <Field label="Last name" value={fields.lastName} error={errors.lastName} onChange={set('lastName')} />
        <div className="field">
          <label htmlFor="custom-fields">Custom fields (JSON)</label>
          <textarea
            id="custom-fields"
            className="mono json"
            rows={Math.min(12, Math.max(3, custom.split('\n').length))}
            spellCheck={false}
            value={custom}
            aria-invalid={customError ? true : undefined}
            aria-describedby={customError ? 'custom-fields-error' : undefined}
            onChange={(e) => {
              setSaved(false);
              setCustom(e.target.value);
            }}
          />
          {customError && (
            <p className="error" id="custom-fields-error">
              {customError}
            </p>
          )}
        </div>
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

function TagsPanel({ contact }: { contact: Contact }) {
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
  const failed = add.error ?? remove.error;
  return (
    <section className="panel" aria-labelledby="tags-heading">
      <h2 id="tags-heading">Tags</h2>
      {failed && Object.keys(errors).length === 0 && (
        <p className="banner error" role="alert">
          {errorMessage(failed)}
        </p>
      )}
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

function SubscriptionsPanel({ contact }: { contact: Contact }) {
  const written = useContactWrite();
  const [email, setEmail] = useState<Subscription>(contact.emailSubscriptionStatus);
  const [whatsapp, setWhatsapp] = useState<Subscription>(contact.whatsappSubscriptionStatus);
  const update = useMutation(trpc.dashboard.contacts.updateSubscriptions.mutationOptions({ onSuccess: ({ contact }) => written(contact) }));
  const errors = fieldErrors(update.error);
  const unchanged = email === contact.emailSubscriptionStatus && whatsapp === contact.whatsappSubscriptionStatus;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate({ id: contact.id, emailSubscriptionStatus: email, whatsappSubscriptionStatus: whatsapp });
  };
  return (
    <section className="panel" aria-labelledby="subscriptions-heading">
      <h2 id="subscriptions-heading">Subscriptions</h2>
      <form onSubmit={submit} noValidate>
        {update.isError && (
          <p className="banner error" role="alert">
            {errorMessage(update.error)}
          </p>
        )}
        <SelectField label="Email subscription" options={SUBSCRIPTION} value={email} error={errors.emailSubscriptionStatus} onChange={(e) => setEmail(e.target.value as Subscription)} />
        <SelectField
          label="WhatsApp subscription"
          options={SUBSCRIPTION}
          value={whatsapp}
          error={errors.whatsappSubscriptionStatus}
          onChange={(e) => setWhatsapp(e.target.value as Subscription)}
        />
        <button type="submit" disabled={update.isPending || unchanged}>
          Save subscriptions
        </button>
      </form>
    </section>
  );
}

function RunsPanel({ contact }: { contact: Contact }) {
  const pages = useCursorPages(contact.id);
  const runs = useQuery({
    ...trpc.dashboard.contacts.runs.queryOptions({ id: contact.id, limit: 20, cursor: pages.cursor }),
    placeholderData: keepPreviousData,
  });
  // Sequence names for the runs: an account has few sequences, one page holds them.
  const sequences = useQuery(trpc.dashboard.sequences.list.queryOptions({ limit: 200 }));
  const names = new Map(sequences.data?.sequences.map((s) => [s.id, s.name]));
  const [leaving, setLeaving] = useState<{ sequenceId: string; name: string } | null>(null);
  return (
    <section className="panel" aria-labelledby="runs-heading">
      <h2 id="runs-heading">Runs</h2>
      {runs.isPending && <p role="status">Loading runs…</p>}
      {runs.isError && (
        <p role="alert" className="banner error">
          {errorMessage(runs.error)}
        </p>
      )}
      {runs.isSuccess && runs.data.runs.length === 0 && <p className="empty">This contact has never been enrolled in a sequence.</p>}
      {runs.isSuccess && runs.data.runs.length > 0 && (
        <>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Runs of this contact, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Sequence</th>
                  <th scope="col">Status</th>
                  <th scope="col">Started</th>
                  <th scope="col">Ended</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {runs.data.runs.map((run) => {
                  const name = names.get(run.sequenceId) ?? 'Sequence';
                  return (
                    <tr key={run.id}>
                      <th scope="row">
                        <Link to={`/sequences/${run.sequenceId}`}>{name}</Link>
                      </th>
                      <td>
                        <RunStatus status={run.status} />
                      </td>
                      <td>
                        <When iso={run.startedAt} />
                      </td>
                      <td>
                        <When iso={run.completedAt} none="—" />
                      </td>
                      <td>
                        {ACTIVE.has(run.status) && (
                          <button type="button" className="secondary" onClick={() => setLeaving({ sequenceId: run.sequenceId, name })}>
                            Unenroll<span className="visually-hidden"> from {name}</span>
                          </button>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <Pager pages={pages} nextCursor={runs.data.nextCursor} label="Runs" />
        </>
      )}
      <UnenrollDialog contact={contact} subject={leaving} onClose={() => setLeaving(null)} />
    </section>
  );
}

function UnenrollDialog({ contact, subject, onClose }: { contact: Contact; subject: { sequenceId: string; name: string } | null; onClose: () => void }) {
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
  const close = () => {
    unenroll.reset();
    onClose();
  };
  return (
    <Dialog open={subject !== null} title={`Unenroll from “${subject?.name ?? ''}”?`} onClose={close}>
      <p>
        The active run of {contact.email} in this sequence will be cancelled. This cannot be undone; the contact can be enrolled
        again later.
      </p>
      {unenroll.isError && (
        <p className="banner error" role="alert">
          {errorMessage(unenroll.error)}
        </p>
      )}
      <div className="actions">
        <button type="button" className="secondary" onClick={close} data-autofocus>
          Cancel
        </button>
        <button type="button" className="danger" disabled={unenroll.isPending} onClick={() => subject && unenroll.mutate({ id: contact.id, sequenceId: subject.sequenceId })}>
          Cancel the run
        </button>
      </div>
    </Dialog>
  );
}

function DeletePanel({ contact }: { contact: Contact }) {
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
  const close = () => {
    remove.reset();
    setConfirming(false);
  };
  return (
    <section className="panel danger-zone" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete</h2>
      <p>Deleting a contact is permanent, and deletes its runs with it.</p>
      <button type="button" className="danger" onClick={() => setConfirming(true)}>
        Delete contact
      </button>
      <Dialog open={confirming} title={`Delete ${contact.email}?`} onClose={close}>
        <p>The contact and all its runs will be deleted for good.</p>
        {remove.isError && (
          <p className="banner error" role="alert">
            {errorMessage(remove.error)}
          </p>
        )}
        <div className="actions">
          <button type="button" className="secondary" onClick={close} data-autofocus>
            Cancel
          </button>
          <button type="button" className="danger" disabled={remove.isPending} onClick={() => remove.mutate({ id: contact.id })}>
            Delete for good
          </button>
        </div>
      </Dialog>
    </section>
  );
}
