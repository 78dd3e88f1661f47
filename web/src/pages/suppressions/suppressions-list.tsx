import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Field } from '../../components/field';
import { FormDialog } from '../../components/form-dialog';
import { None } from '../../components/none';
import { Pager } from '../../components/pager';
import { QueryState } from '../../components/query-state';
import { SelectField } from '../../components/select-field';
import { Table } from '../../components/table';
import { useCursorPages } from '../../components/use-cursor-pages';
import { useUrlFilters } from '../../components/use-url-filters';
import { When } from '../../components/when';
import { fieldErrors, trpc } from '../../trpc';

// Audience -> Suppressions (docs/channels.md "Suppressions"): the addresses this account never
// sends to on a channel, whoever the contact is. Search by address, filter by channel and
// reason, add one, remove one after a confirmation.

const PAGE_SIZE = 25;
const COLUMNS = ['Address', 'Channel', 'Reason', 'Source', 'Added', { label: 'Actions', hidden: true }];
type Channel = 'email' | 'whatsapp';
type Reason = 'hard_bounce' | 'complaint' | 'unsubscribe' | 'opt_out' | 'invalid' | 'manual';
const CHANNEL_NAMES: Record<Channel, string> = { email: 'Email', whatsapp: 'WhatsApp' };
// The same, inside a sentence.
const CHANNEL_WORDS: Record<Channel, string> = { email: 'email', whatsapp: 'WhatsApp' };
const REASON_NAMES: Record<Reason, string> = {
  hard_bounce: 'Hard bounce',
  complaint: 'Complaint',
  unsubscribe: 'Unsubscribe',
  opt_out: 'Opt-out',
  invalid: 'Invalid',
  manual: 'Manual',
};
const CHANNELS = Object.entries(CHANNEL_NAMES) as Array<[Channel, string]>;
const REASONS = Object.entries(REASON_NAMES) as Array<[Reason, string]>;

interface Filters {
  address: string;
  channel: '' | Channel;
  reason: '' | Reason;
}
const NO_FILTERS: Filters = { address: '', channel: '', reason: '' };

// The filters live in the address (?address=&channel=&reason=): use-url-filters.ts.
function filtersFrom(search: URLSearchParams): Filters {
  const channel = search.get('channel');
  const reason = search.get('reason');
  return {
    address: search.get('address') ?? '',
    channel: channel && channel in CHANNEL_NAMES ? (channel as Channel) : '',
    reason: reason && reason in REASON_NAMES ? (reason as Reason) : '',
  };
}


type Suppression = { channel: Channel; address: string; reason: Reason; source: string | null; createdAt: string };

export function SuppressionsPage() {
  const { search, filters, draft, setDraft, filtered, submit, clear } = useUrlFilters('/suppressions', filtersFrom, NO_FILTERS);
  const pages = useCursorPages(JSON.stringify(filters));
  const list = useQuery({
    ...trpc.dashboard.suppressions.list.queryOptions({
      limit: PAGE_SIZE,
      cursor: pages.cursor,
      address: filters.address.trim() || undefined,
      channel: filters.channel || undefined,
      reason: filters.reason || undefined,
    }),
    placeholderData: keepPreviousData,
  });
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<Suppression | null>(null);
  const [notice, setNotice] = useState('');
  const errors = fieldErrors(list.error);

  return (
    <>
      <div className="toolbar">
        <p>Messages to these addresses are skipped on their channel, whoever the contact is: bounces, complaints and opt-outs land here.</p>
        <button type="button" onClick={() => setAdding(true)}>
          Add suppression
        </button>
      </div>
      <form className="filters" role="search" aria-label="Suppressions" onSubmit={submit} noValidate>
        <Field
          label="Address"
          type="search"
          value={draft.address}
          error={errors.address}
          onChange={(e) => setDraft({ ...draft, address: e.target.value })}
        />
        <SelectField label="Channel" options={[['', 'Any'], ...CHANNELS]} value={draft.channel} onChange={(e) => setDraft({ ...draft, channel: e.target.value as Filters['channel'] })} />
        <SelectField label="Reason" options={[['', 'Any'], ...REASONS]} value={draft.reason} onChange={(e) => setDraft({ ...draft, reason: e.target.value as Filters['reason'] })} />
        <div className="filter-actions">
          <button type="submit">Search</button>
          <button type="button" className="secondary" onClick={clear}>
            Clear
          </button>
        </div>
      </form>
      <p role="status" className={notice ? 'banner' : undefined}>
        {notice}
      </p>
      <QueryState
        query={list}
        loading="Loading suppressions…"
        isEmpty={(data) => data.suppressions.length === 0}
        empty={filtered ? 'No suppressions match these filters.' : 'No suppressions yet. Hard bounces, complaints and opt-outs are added here, and so is what you add.'}
      >
        {(data) => (
          <>
            <Table caption="Suppressions, newest first" columns={COLUMNS} busy={list.isPlaceholderData}>
              {data.suppressions.map((suppression) => (
                <tr key={`${suppression.channel} ${suppression.address}`}>
                  <th scope="row" className="wrap">
                    {suppression.address}
                  </th>
                  <td>{CHANNEL_NAMES[suppression.channel]}</td>
                  <td>
                    <span className={`badge ${suppression.reason === 'manual' ? 'disabled' : 'failed'}`}>{REASON_NAMES[suppression.reason]}</span>
                  </td>
                  <td className="wrap">{suppression.source ? <code>{suppression.source}</code> : <None />}</td>
                  <td>
                    <When iso={suppression.createdAt} />
                  </td>
                  <td>
                    <button type="button" className="secondary" onClick={() => setRemoving(suppression)}>
                      Remove<span className="visually-hidden"> {suppression.address} ({CHANNEL_NAMES[suppression.channel]})</span>
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
            <div className="list-foot">
              <Pager pages={pages} nextCursor={data.nextCursor} label="Suppressions" />
            </div>
          </>
        )}
      </QueryState>
      <AddSuppressionDialog
        open={adding}
        onClose={() => setAdding(false)}
        onAdded={(text) => {
          setAdding(false);
          setNotice(text);
        }}
      />
      <RemoveDialog
        suppression={removing}
        onClose={() => setRemoving(null)}
        onRemoved={(text) => {
          setRemoving(null);
          setNotice(text);
        }}
      />
    </>
  );
}

const EMPTY = { channel: 'email' as Channel, address: '', reason: 'manual' as Reason };

// The API's add, one item: its problems come back at suppressions.0.<field>.
function AddSuppressionDialog({ open, onClose, onAdded }: { open: boolean; onClose: () => void; onAdded: (notice: string) => void }) {
  const queryClient = useQueryClient();
  const [fields, setFields] = useState(EMPTY);
  const add = useMutation(
    trpc.dashboard.suppressions.add.mutationOptions({
      onSuccess: ({ summary }) => {
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.suppressions.pathKey() });
        const where = CHANNEL_WORDS[fields.channel];
        onAdded(summary.added > 0 ? `${fields.address.trim()} is suppressed on ${where}.` : `${fields.address.trim()} was on the list for ${where} already; it is unchanged.`);
        setFields(EMPTY);
        add.reset();
      },
    }),
  );
  const errors = fieldErrors(add.error);
  const at = (field: string) => errors[`suppressions.0.${field}`];
  return (
    <FormDialog open={open} title="Add a suppression" submit="Add suppression" action={add} onSubmit={() => add.mutate({ suppressions: [fields] })} onClose={onClose}>
      <SelectField label="Channel" options={CHANNELS} value={fields.channel} error={at('channel')} onChange={(e) => setFields({ ...fields, channel: e.target.value as Channel })} />
      <Field
        label="Address"
        hint={fields.channel === 'email' ? 'An email address.' : 'A phone number with its country code, e.g. +49 151 1285 5001.'}
        autoComplete="off"
        required
        value={fields.address}
        error={at('address')}
        onChange={(e) => setFields({ ...fields, address: e.target.value })}
        data-autofocus
      />
      <SelectField label="Reason" options={REASONS} value={fields.reason} error={at('reason')} onChange={(e) => setFields({ ...fields, reason: e.target.value as Reason })} />
    </FormDialog>
  );
}

function RemoveDialog({ suppression, onClose, onRemoved }: { suppression: Suppression | null; onClose: () => void; onRemoved: (notice: string) => void }) {
  const queryClient = useQueryClient();
  const remove = useMutation(
    trpc.dashboard.suppressions.remove.mutationOptions({
      onSuccess: ({ suppression: removed }) => {
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.suppressions.pathKey() });
        remove.reset();
        onRemoved(`${removed.address} is no longer suppressed on ${CHANNEL_WORDS[removed.channel]}.`);
      },
    }),
  );
  return (
    <ConfirmDialog
      open={suppression !== null}
      title={suppression ? `Remove ${suppression.address} from the suppression list?` : ''}
      confirm="Remove"
      action={remove}
      onConfirm={() => suppression && remove.mutate({ channel: suppression.channel, address: suppression.address })}
      onClose={onClose}
    >
      {suppression &&
        `The next ${CHANNEL_WORDS[suppression.channel]} message of a sequence to this address will be sent` +
          (suppression.reason === 'manual' ? '.' : `: it was added for a ${REASON_NAMES[suppression.reason].toLowerCase()}, and sending again can harm this account's reputation.`)}
    </ConfirmDialog>
  );
}
