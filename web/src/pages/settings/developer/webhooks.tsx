import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ConfirmDialog } from '../../../components/confirm-dialog';
import { CloseButton, Dialog } from '../../../components/dialog';
import { ErrorBanner } from '../../../components/error-banner';
import { Field } from '../../../components/field';
import { FormDialog } from '../../../components/form-dialog';
import { QueryState } from '../../../components/query-state';
import { None } from '../../../components/none';
import { When } from '../../../components/when';
import { ShownOnceDialog } from '../../../components/shown-once-dialog';
import { Table } from '../../../components/table';
import { Link } from '../../../router';
import { fieldErrors, trpc } from '../../../trpc';

type Webhook = NonNullable<ReturnType<typeof useWebhooks>['data']>['webhooks'][number];
type Confirming = { webhook: Webhook; action: 'disable' | 'enable' | 'rotate' | 'delete' };
const ATTEMPT_COLUMNS = ['When', 'Attempt', 'Result', 'Time', 'Next try', 'Error'];
const STEP_CALL_COLUMNS = ['When', 'Run', 'Attempt', 'Result', 'Time', 'Next try', 'Error'];
const ENDPOINT_COLUMNS = ['URL', 'Events', 'Created', 'Status', { label: 'Actions', hidden: true }];

function useWebhooks() {
  return useQuery(trpc.dashboard.webhooks.list.queryOptions());
}


function status(webhook: Webhook): 'Active' | 'Failing' | 'Disabled' {
  if (!webhook.enabled) return 'Disabled';
  return webhook.failingSince ? 'Failing' : 'Active';
}

export function WebhooksPage() {
  const webhooks = useWebhooks();
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ title: string; value: string } | null>(null);
  const [confirming, setConfirming] = useState<Confirming | null>(null);
  const [watching, setWatching] = useState<Webhook | null>(null);

  return (
    <>
      <div className="toolbar">
        <p>
          Endpoints receive this account&apos;s events as signed POSTs (Standard Webhooks), retried for about 3 days until they answer 2xx.
        </p>
        <button type="button" onClick={() => setCreating(true)}>
          Add endpoint
        </button>
      </div>
      <QueryState query={webhooks} loading="Loading endpoints…" isEmpty={(data) => data.webhooks.length === 0} empty="No endpoints yet. Add one to receive events.">
        {(data) => (
          <Table caption="Webhook endpoints of this account" columns={ENDPOINT_COLUMNS}>
            {data.webhooks.map((webhook) => (
              <tr key={webhook.id}>
                <th scope="row" className="wrap">
                  <code>{webhook.url}</code>
                  {webhook.description && <span className="hint sub">{webhook.description}</span>}
                </th>
                <td className="wrap">{webhook.events ? webhook.events.join(', ') : 'All'}</td>
                <td><When iso={webhook.createdAt} /></td>
                <td>
                  <span className={`badge ${status(webhook).toLowerCase()}`}>{status(webhook)}</span>
                </td>
                <td className="row-actions">
                  <button type="button" className="secondary" onClick={() => setWatching(webhook)}>
                    Deliveries<span className="visually-hidden"> of {webhook.url}</span>
                  </button>
                  <button type="button" className="secondary" onClick={() => setConfirming({ webhook, action: webhook.enabled ? 'disable' : 'enable' })}>
                    {webhook.enabled ? 'Disable' : 'Enable'}
                    <span className="visually-hidden"> {webhook.url}</span>
                  </button>
                  <button type="button" className="secondary" onClick={() => setConfirming({ webhook, action: 'rotate' })}>
                    Rotate secret<span className="visually-hidden"> of {webhook.url}</span>
                  </button>
                  <button type="button" className="secondary" onClick={() => setConfirming({ webhook, action: 'delete' })}>
                    Delete<span className="visually-hidden"> {webhook.url}</span>
                  </button>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </QueryState>
      <CreateWebhookDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(url, value) => {
          setCreating(false);
          setSecret({ title: `Endpoint ${url} added`, value });
        }}
      />
      <ActionDialog confirming={confirming} onClose={() => setConfirming(null)} onSecret={setSecret} />
      <ShownOnceDialog shown={secret} label="signing secret" why="keep it where your receiver verifies signatures." onClose={() => setSecret(null)} />
      <DeliveriesDialog webhook={watching} onClose={() => setWatching(null)} />
    </>
  );
}

function CreateWebhookDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (url: string, secret: string) => void }) {
  const queryClient = useQueryClient();
  const types = useQuery({ ...trpc.dashboard.webhooks.eventTypes.queryOptions(), enabled: open });
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  // null: every type, now and to come.
  const [events, setEvents] = useState<string[] | null>(null);
  const create = useMutation(
    trpc.dashboard.webhooks.create.mutationOptions({
      onSuccess: (created) => {
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.webhooks.list.queryKey() });
        setUrl('');
        setDescription('');
        setEvents(null);
        create.reset();
        onCreated(created.webhook.url, created.secret);
      },
    }),
  );
  const errors = fieldErrors(create.error);
  const submit = () => {
    // The checkboxes list the types the service knows, so the cast only narrows to them.
    create.mutate({ url, description: description || null, events: events as Parameters<typeof create.mutate>[0]['events'] });
  };
  const toggle = (type: string, on: boolean) => {
    const chosen = events ?? [];
    setEvents(on ? [...chosen, type] : chosen.filter((t) => t !== type));
  };
  return (
    <FormDialog open={open} title="Add a webhook endpoint" submit="Add endpoint" action={create} onSubmit={submit} onClose={onClose}>
      <Field label="URL" hint="https, on a public address." type="url" required value={url} error={errors.url} onChange={(e) => setUrl(e.target.value)} data-autofocus />
      <Field label="Description (optional)" maxLength={500} value={description} error={errors.description} onChange={(e) => setDescription(e.target.value)} />
      <fieldset className="field">
        <legend>Events</legend>
        <label className="choice">
          <input type="radio" name="events" checked={events === null} onChange={() => setEvents(null)} /> All events
        </label>
        <label className="choice">
          <input type="radio" name="events" checked={events !== null} onChange={() => setEvents([])} /> Only these:
        </label>
        {events !== null && (
          <div className="checks">
            {(types.data ?? []).map((type) => (
              <label key={type} className="choice">
                <input type="checkbox" checked={events.includes(type)} onChange={(e) => toggle(type, e.target.checked)} /> <code>{type}</code>
              </label>
            ))}
          </div>
        )}
        {errors.events && <p className="error">{errors.events}</p>}
      </fieldset>
    </FormDialog>
  );
}

const CONFIRM = {
  disable: { title: 'Disable', text: 'No events are sent while it is disabled; they wait, and go out when you enable it again.', button: 'Disable endpoint', danger: true },
  enable: { title: 'Enable', text: 'Events that waited while it was disabled are sent now.', button: 'Enable endpoint', danger: false },
  rotate: { title: 'Rotate the secret of', text: 'A new secret signs from now on; the old one still signs for 24 hours, beside it, so you can switch the receiver over.', button: 'Rotate secret', danger: false },
  delete: { title: 'Delete', text: 'The endpoint, its pending deliveries and their history are removed. This cannot be undone.', button: 'Delete endpoint', danger: true },
} as const;

function ActionDialog({ confirming, onClose, onSecret }: { confirming: Confirming | null; onClose: () => void; onSecret: (shown: { title: string; value: string }) => void }) {
  const queryClient = useQueryClient();
  const done = async () => {
    await queryClient.invalidateQueries({ queryKey: trpc.dashboard.webhooks.list.queryKey() });
    onClose();
  };
  const setEnabled = useMutation(trpc.dashboard.webhooks.setEnabled.mutationOptions({ onSuccess: done }));
  const remove = useMutation(trpc.dashboard.webhooks.delete.mutationOptions({ onSuccess: done }));
  const rotate = useMutation(
    trpc.dashboard.webhooks.rotateSecret.mutationOptions({
      onSuccess: async (rotated) => {
        await done();
        onSecret({ title: `New secret for ${rotated.webhook.url}`, value: rotated.secret });
      },
    }),
  );
  const mutations = [setEnabled, remove, rotate];
  const state = {
    isPending: mutations.some((m) => m.isPending),
    error: mutations.find((m) => m.isError)?.error,
    reset: () => mutations.forEach((m) => m.reset()),
  };
  const copy = confirming ? CONFIRM[confirming.action] : null;
  const go = () => {
    if (!confirming) return;
    const { webhook, action } = confirming;
    if (action === 'delete') remove.mutate({ id: webhook.id });
    else if (action === 'rotate') rotate.mutate({ id: webhook.id });
    else setEnabled.mutate({ id: webhook.id, enabled: action === 'enable' });
  };
  return (
    <ConfirmDialog
      open={confirming !== null}
      title={`${copy?.title ?? ''} ${confirming?.webhook.url ?? ''}?`}
      confirm={copy?.button ?? ''}
      danger={copy?.danger === true}
      action={state}
      onConfirm={go}
      onClose={onClose}
    >
      {copy?.text}
    </ConfirmDialog>
  );
}

function DeliveriesDialog({ webhook, onClose }: { webhook: Webhook | null; onClose: () => void }) {
  const deliveries = useQuery({ ...trpc.dashboard.webhooks.deliveries.queryOptions({ id: webhook?.id ?? '' }), enabled: webhook !== null, staleTime: 0 });
  const test = useMutation(trpc.dashboard.webhooks.sendTest.mutationOptions());
  const close = () => {
    test.reset();
    onClose();
  };
  return (
    <Dialog open={webhook !== null} title={`Deliveries to ${webhook?.url ?? ''}`} onClose={close}>
      <div className="toolbar">
        <p role="status">{test.isSuccess ? 'Test event recorded: it goes out within seconds.' : 'The latest 20 attempts, newest first.'}</p>
        <button type="button" className="secondary" disabled={test.isPending} onClick={() => webhook && test.mutate({ id: webhook.id })}>
          Send test
        </button>
        <button type="button" className="secondary" onClick={() => void deliveries.refetch()}>
          Refresh
        </button>
      </div>
      <ErrorBanner error={test.error} />
      <QueryState
        query={deliveries}
        loading="Loading deliveries…"
        isEmpty={(data) => data.attempts.length === 0 && data.stepCalls.length === 0}
        empty="No attempts yet."
      >
        {(data) => (
          <>
          <h3 className="deliveries-heading">Events</h3>
          {data.attempts.length === 0 ? (
            <p className="meta">No event deliveries yet.</p>
          ) : (
          <Table caption="Event delivery attempts" columns={ATTEMPT_COLUMNS}>
            {data.attempts.map((attempt) => (
              <tr key={attempt.id}>
                <td><When iso={attempt.createdAt} /></td>
                <td>{attempt.attempt}</td>
                <td>
                  <span className={`badge ${attempt.succeeded ? 'active' : 'failing'}`}>
                    {attempt.responseStatus ?? 'No answer'}
                    {attempt.succeeded ? ' OK' : ''}
                  </span>
                </td>
                <td>{attempt.durationMs} ms</td>
                <td><When iso={attempt.nextAttemptAt} /></td>
                {/* The one cell that wraps: the rest of the row stays on one line. */}
                <td className="error-cell">{attempt.error ?? <None />}</td>
              </tr>
            ))}
          </Table>
          )}
          {data.stepCalls.length > 0 && <h3 className="deliveries-heading">Sequences’ webhook steps</h3>}
          {data.stepCalls.length > 0 && (
            // A sequence's webhook step calls the endpoint too: each attempt as its run's
            // timeline records it.
            <Table caption="Calls from sequences' webhook steps" columns={STEP_CALL_COLUMNS}>
              {data.stepCalls.map((call) => (
                <tr key={`${call.runId}-${call.stepId}-${call.attempt}-${call.startedAt}`}>
                  <td><When iso={call.startedAt} /></td>
                  <td>
                    <Link to={`/runs/${call.runId}`}>
                      Step {call.stepId}<span className="visually-hidden">, run {call.runId}</span>
                    </Link>
                  </td>
                  <td>{call.attempt}</td>
                  <td>
                    <span className={`badge ${call.status === 'succeeded' ? 'active' : call.status === 'failed' ? 'failing' : 'disabled'}`}>
                      {call.responseStatus ?? 'No answer'}
                      {call.status === 'succeeded' ? ' OK' : ''}
                    </span>
                  </td>
                  <td>{call.durationMs === null ? <None /> : `${call.durationMs} ms`}</td>
                  <td><When iso={call.nextAttemptAt} /></td>
                  <td className="error-cell">{call.error ?? <None />}</td>
                </tr>
              ))}
            </Table>
          )}
          </>
        )}
      </QueryState>
      <CloseButton label="Close" onClose={close} />
    </Dialog>
  );
}
