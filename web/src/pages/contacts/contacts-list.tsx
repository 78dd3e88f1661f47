import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Fragment, useState } from 'react';
import { Field } from '../../components/field';
import { None } from '../../components/none';
import { Pager } from '../../components/pager';
import { QueryState } from '../../components/query-state';
import { SelectField } from '../../components/select-field';
import { Table } from '../../components/table';
import { useCursorPages } from '../../components/use-cursor-pages';
import { useUrlFilters } from '../../components/use-url-filters';
import { When } from '../../components/when';
import { Link } from '../../router';
import { fieldErrors, trpc } from '../../trpc';
import { EnrollDialog, type Enrollee } from '../sequences/enroll-dialog';
import { CreateContactDialog } from './create-contact-dialog';

const PAGE_SIZE = 25;
// At 1280 px the table must fit its box with the Created date whole (issue 26): long
// addresses and names wrap (an address before its @ first), and so do the two long headings,
// while dates and badges stay on one line. On a phone the table scrolls inside its box.
const COLUMNS = [
  { label: 'Select', hidden: true, className: 'pick' },
  'Email',
  'Name',
  'Tags',
  { label: 'Email subscription', className: 'wrap-heading' },
  { label: 'WhatsApp subscription', className: 'wrap-heading' },
  'Created',
];
const SUBSCRIPTION_FILTER = [
  ['', 'Any'],
  ['subscribed', 'Subscribed'],
  ['unsubscribed', 'Unsubscribed'],
] as const;

type Subscription = '' | 'subscribed' | 'unsubscribed';
interface Filters {
  q: string;
  tag: string;
  email: Subscription;
  whatsapp: Subscription;
}
const NO_FILTERS: Filters = { q: '', tag: '', email: '', whatsapp: '' };

// The filters live in the address (?q=&tag=&email=&whatsapp=): Back from a contact returns to
// the same search, and a search can be bookmarked.
function filtersFrom(search: URLSearchParams): Filters {
  const subscription = (value: string | null): Subscription => (value === 'subscribed' || value === 'unsubscribed' ? value : '');
  return { q: search.get('q') ?? '', tag: search.get('tag') ?? '', email: subscription(search.get('email')), whatsapp: subscription(search.get('whatsapp')) };
}


export function ContactsPage() {
  const { search, filters, draft, setDraft, filtered, submit, clear } = useUrlFilters('/contacts', filtersFrom, NO_FILTERS);
  const pages = useCursorPages(JSON.stringify(filters));
  const listFilters = {
    q: filters.q.trim() || undefined,
    tag: filters.tag.trim() || undefined,
    emailSubscriptionStatus: filters.email || undefined,
    whatsappSubscriptionStatus: filters.whatsapp || undefined,
  };
  const contacts = useQuery({
    ...trpc.dashboard.contacts.list.queryOptions({ limit: PAGE_SIZE, cursor: pages.cursor, ...listFilters }),
    placeholderData: keepPreviousData,
  });
  const total = useQuery({ ...trpc.dashboard.contacts.count.queryOptions(listFilters), placeholderData: keepPreviousData });
  const [creating, setCreating] = useState(false);
  const [enrolling, setEnrolling] = useState(false);
  // The selection is of the page shown: it ends with a new page or new filters.
  const pageKey = `${search.toString()}#${pages.pageNumber}`;
  const [selection, setSelection] = useState<{ key: string; picked: Map<string, Enrollee> }>({ key: pageKey, picked: new Map() });
  const picked = selection.key === pageKey ? selection.picked : new Map<string, Enrollee>();
  const pick = (contacts: Enrollee[], on: boolean) => {
    const next = new Map(picked);
    for (const contact of contacts) {
      if (on) next.set(contact.id, contact);
      else next.delete(contact.id);
    }
    setSelection({ key: pageKey, picked: next });
  };
  const errors = fieldErrors(contacts.error);

  return (
    <>
      <div className="toolbar">
        <p>Contacts arrive through the API, from a CSV file, or one by one here.</p>
        <div className="actions start toolbar-actions">
          <Link to="/contacts/import" className="button secondary">
            Import contacts
          </Link>
          <button type="button" onClick={() => setCreating(true)}>
            New contact
          </button>
        </div>
      </div>
      <form className="filters" role="search" aria-label="Contacts" onSubmit={submit} noValidate>
        <Field label="Email starts with" type="search" value={draft.q} error={errors.q} onChange={(e) => setDraft({ ...draft, q: e.target.value })} />
        <Field label="Tag" value={draft.tag} error={errors.tag} onChange={(e) => setDraft({ ...draft, tag: e.target.value })} />
        <SelectField
          label="Email subscription"
          options={SUBSCRIPTION_FILTER}
          value={draft.email}
          onChange={(e) => setDraft({ ...draft, email: e.target.value as Subscription })}
        />
        <SelectField
          label="WhatsApp subscription"
          options={SUBSCRIPTION_FILTER}
          value={draft.whatsapp}
          onChange={(e) => setDraft({ ...draft, whatsapp: e.target.value as Subscription })}
        />
        <div className="filter-actions">
          <button type="submit">Search</button>
          <button type="button" className="secondary" onClick={clear}>
            Clear
          </button>
        </div>
      </form>
      <QueryState
        query={contacts}
        loading="Loading contacts…"
        isEmpty={(data) => data.contacts.length === 0}
        empty={filtered ? 'No contacts match these filters.' : 'No contacts yet. Import a CSV file, add one with “New contact”, or use the API.'}
      >
        {(data) => {
          const shown = data.contacts.map(({ id, email }) => ({ id, email }));
          const allPicked = shown.length > 0 && shown.every((c) => picked.has(c.id));
          const first = (pages.pageNumber - 1) * PAGE_SIZE + 1;
          return (
          <>
            <div className="selection">
              <label className="choice">
                <input type="checkbox" checked={allPicked} onChange={(e) => pick(shown, e.target.checked)} /> Select all on this page
              </label>
              <button type="button" className="secondary" disabled={picked.size === 0} onClick={() => setEnrolling(true)}>
                Enroll selected in a sequence
              </button>
              <p role="status">{picked.size > 0 ? `${picked.size} selected` : ''}</p>
            </div>
            <Table caption="Contacts, newest first" columns={COLUMNS} busy={contacts.isPlaceholderData}>
              {data.contacts.map((contact) => {
                const name = [contact.firstName, contact.lastName].filter(Boolean).join(' ');
                return (
                <tr key={contact.id}>
                  <td className="pick">
                    <input
                      type="checkbox"
                      aria-label={`Select ${contact.email}`}
                      checked={picked.has(contact.id)}
                      onChange={(e) => pick([{ id: contact.id, email: contact.email }], e.target.checked)}
                    />
                  </td>
                  <th scope="row" className="email-cell">
                    <Link to={`/contacts/${contact.id}`}>
                      <BreakableEmail email={contact.email} />
                    </Link>
                  </th>
                  <td className="wrap">{name || <None />}</td>
                  <td className="wrap">
                    {contact.tags.length === 0 && <None />}
                    {contact.tags.map((tag) => (
                      <span key={tag} className="tag">
                        {tag}
                      </span>
                    ))}
                  </td>
                  <td>
                    <Subscription status={contact.emailSubscriptionStatus} />
                  </td>
                  <td>
                    <Subscription status={contact.whatsappSubscriptionStatus} />
                  </td>
                  <td>
                    <When iso={contact.createdAt} />
                  </td>
                </tr>
                );
              })}
            </Table>
            <div className="list-foot">
              <p className="count">
                {first.toLocaleString('en')}–{(first + data.contacts.length - 1).toLocaleString('en')}
                {total.data && ` of ${total.data.capped ? `more than ${total.data.count.toLocaleString('en')}` : total.data.count.toLocaleString('en')}`}
              </p>
              <Pager pages={pages} nextCursor={data.nextCursor} label="Contacts" />
            </div>
          </>
          );
        }}
      </QueryState>
      <CreateContactDialog open={creating} onClose={() => setCreating(false)} />
      <EnrollDialog open={enrolling} contacts={[...picked.values()]} onClose={() => setEnrolling(false)} />
    </>
  );
}

// An address in a narrow cell breaks before its @ and after its dots, rather than anywhere.
function BreakableEmail({ email }: { email: string }) {
  const parts = email.split(/(?=@)|(?<=\.)/);
  return (
    <>
      {parts.map((part, index) => (
        <Fragment key={index}>
          {index > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </>
  );
}

export function Subscription({ status }: { status: 'subscribed' | 'unsubscribed' }) {
  return <span className={`badge ${status === 'subscribed' ? 'active' : 'disabled'}`}>{status === 'subscribed' ? 'Subscribed' : 'Unsubscribed'}</span>;
}
