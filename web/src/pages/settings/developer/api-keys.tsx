import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../../components/confirm-dialog';
import { Field } from '../../../components/field';
import { FormDialog } from '../../../components/form-dialog';
import { QueryState } from '../../../components/query-state';
import { When } from '../../../components/when';
import { ShownOnceDialog } from '../../../components/shown-once-dialog';
import { Table } from '../../../components/table';
import { fieldErrors, trpc } from '../../../trpc';

type Key = NonNullable<ReturnType<typeof useKeys>['data']>[number];
const COLUMNS = ['Name', 'Prefix', 'Kind', 'Created', 'Last used', 'Expires', 'Status', { label: 'Actions', hidden: true }];

function useKeys() {
  return useQuery(trpc.dashboard.keys.list.queryOptions());
}


function status(key: Key): 'Active' | 'Disabled' | 'Expired' {
  if (!key.active) return 'Disabled';
  if (key.expiresAt && new Date(key.expiresAt) <= new Date()) return 'Expired';
  return 'Active';
}

export function ApiKeysPage() {
  const keys = useKeys();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [toggling, setToggling] = useState<Key | null>(null);

  return (
    <>
      <div className="toolbar">
        <p>
          Keys let your integrations call the API (<code>x-api-key</code> header). Integration keys call the public API; runner keys
          may also move runs.
        </p>
        <button type="button" onClick={() => setCreating(true)}>
          Create key
        </button>
      </div>
      <QueryState query={keys} loading="Loading keys…" isEmpty={(data) => data.length === 0} empty="No keys yet. Create one to call the API.">
        {(data) => (
          <Table caption="API keys of this account" columns={COLUMNS}>
            {data.map((key) => (
              <tr key={key.id}>
                <th scope="row">{key.name}</th>
                <td>
                  <code>{key.prefix}…</code>
                </td>
                <td>{key.kind}</td>
                <td><When iso={key.createdAt} /></td>
                <td><When iso={key.lastUsedAt} none="Never" /></td>
                <td><When iso={key.expiresAt} none="Never" /></td>
                <td>
                  <span className={`badge ${status(key).toLowerCase()}`}>{status(key)}</span>
                </td>
                <td>
                  <button type="button" className="secondary" onClick={() => setToggling(key)}>
                    {key.active ? 'Disable' : 'Enable'}
                    <span className="visually-hidden"> {key.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </QueryState>
      <CreateKeyDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(key) => {
          setCreating(false);
          setCreated(key);
        }}
      />
      <ShownOnceDialog
        shown={created && { title: `Key “${created.name}” created`, value: created.key }}
        label="API key"
        why="only its hash is stored."
        onClose={() => setCreated(null)}
      />
      <ToggleKeyDialog subject={toggling} onClose={() => setToggling(null)} />
    </>
  );
}

function CreateKeyDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (key: { name: string; key: string }) => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [kind, setKind] = useState<'integration' | 'runner'>('integration');
  const [expiry, setExpiry] = useState('');
  const create = useMutation(
    trpc.dashboard.keys.create.mutationOptions({
      onSuccess: (key) => {
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.keys.list.queryKey() });
        setName('');
        setExpiry('');
        setKind('integration');
        create.reset();
        onCreated({ name: key.name, key: key.key });
      },
    }),
  );
  const errors = fieldErrors(create.error);
  const submit = () => {
    // The date input gives a local day; the key stops working at the end of it.
    const expiresAt = expiry ? new Date(`${expiry}T23:59:59`).toISOString() : null;
    create.mutate({ name, kind, expiresAt });
  };
  return (
    <FormDialog open={open} title="Create an API key" submit="Create key" action={create} onSubmit={submit} onClose={onClose}>
      <Field label="Name" hint="Who or what uses it, e.g. “Shop plugin”." required maxLength={255} value={name} error={errors.name} onChange={(e) => setName(e.target.value)} data-autofocus />
      <Field label="Expires on (optional)" type="date" value={expiry} error={errors.expiresAt} onChange={(e) => setExpiry(e.target.value)} />
      <fieldset className="field">
        <legend>Kind</legend>
        <label className="choice">
          <input type="radio" name="kind" value="integration" checked={kind === 'integration'} onChange={() => setKind('integration')} /> Integration (the
          public API)
        </label>
        <label className="choice">
          <input type="radio" name="kind" value="runner" checked={kind === 'runner'} onChange={() => setKind('runner')} /> Runner (the sequence runner;
          may move runs)
        </label>
        {errors.kind && <p className="error">{errors.kind}</p>}
      </fieldset>
    </FormDialog>
  );
}

function ToggleKeyDialog({ subject, onClose }: { subject: Key | null; onClose: () => void }) {
  const queryClient = useQueryClient();
  const setActive = useMutation(
    trpc.dashboard.keys.setActive.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.dashboard.keys.list.queryKey() });
        setActive.reset();
        onClose();
      },
    }),
  );
  const enabling = subject ? !subject.active : false;
  return (
    <ConfirmDialog
      open={subject !== null}
      title={`${enabling ? 'Enable' : 'Disable'} “${subject?.name ?? ''}”?`}
      confirm={enabling ? 'Enable key' : 'Disable key'}
      danger={!enabling}
      action={setActive}
      onConfirm={() => subject && setActive.mutate({ id: subject.id, active: enabling })}
      onClose={onClose}
    >
      {enabling ? 'Requests with this key will be accepted again.' : 'Requests with this key will be refused with 401 at once. You can enable it again later.'}
    </ConfirmDialog>
  );
}
