import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorBanner } from '../../components/error-banner';
import { Field } from '../../components/field';
import { QueryState } from '../../components/query-state';
import { fieldErrors, trpc } from '../../trpc';

// Settings -> Channels -> Sending domains (docs/channels.md "Verified sending domains and the
// DNS records"): add a domain, publish the records it lists, press Verify; delete one.

type Domains = NonNullable<ReturnType<typeof useDomains>['data']>;
type Domain = Domains['domains'][number];
type Check = Domain['records'][number];

function useDomains() {
  return useQuery(trpc.dashboard.channels.domains.queryOptions());
}

const PURPOSES: Record<Check['purpose'], string> = {
  verification: 'Verification (proves the domain is yours)',
  dkim: 'DKIM (the signing key)',
  spf: 'SPF (the relay that may send)',
  dmarc: 'DMARC (the policy)',
};

const STATUSES: Record<Check['status'], string> = {
  found: 'Found',
  missing: 'Not found',
  mismatch: 'Found, with other contents',
  lookup_failed: 'The lookup failed: try again',
  not_checked: 'Not checked yet: press Verify',
  no_key: 'No DKIM key for this domain yet',
};

export function SendingDomainsPanel() {
  const domains = useDomains();
  return (
    <section className="panel" aria-labelledby="domains-heading">
      <h2 id="domains-heading">Sending domains</h2>
      <QueryState query={domains} loading="Loading the sending domains…">
        {(data) => <DomainsBody data={data} />}
      </QueryState>
    </section>
  );
}

function DomainsBody({ data }: { data: Domains }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.dashboard.channels.domains.queryKey() });
  // The answer carries what the resolver saw at once: it goes into the list as it is.
  const add = useMutation(
    trpc.dashboard.channels.addDomain.mutationOptions({
      onSuccess: ({ domain }) => {
        setName('');
        queryClient.setQueryData(trpc.dashboard.channels.domains.queryKey(), (old: Domains | undefined) =>
          old ? { ...old, domains: [...old.domains.filter((d) => d.domain !== domain.domain), domain].sort((a, b) => a.domain.localeCompare(b.domain)) } : old,
        );
      },
    }),
  );
  const errors = fieldErrors(add.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate({ domain: name.trim() });
  };
  return (
    <>
      <p className="hint">
        Through the server&apos;s shared relay, emails go out only From a verified domain or a subdomain of one.
        {data.operatorDomains.length > 0 && <> The server&apos;s own domains ({data.operatorDomains.join(', ')}) are verified for every account.</>}
      </p>
      <form onSubmit={submit} noValidate>
        <ErrorBanner error={add.error} />
        <Field label="Domain to send from" value={name} placeholder="shop.example" onChange={(e) => setName(e.target.value)} error={errors.domain} autoComplete="off" />
        <div className="actions start">
          <button type="submit" disabled={add.isPending}>Add domain</button>
        </div>
      </form>
      {data.domains.length === 0 ? <p>No sending domain yet.</p> : data.domains.map((domain) => <DomainCard key={domain.domain} domain={domain} onChange={refresh} />)}
    </>
  );
}

function DomainCard({ domain, onChange }: { domain: Domain; onChange: () => Promise<unknown> }) {
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  // The last check's answer, with what the resolver saw; the list itself looks nothing up.
  const [checked, setChecked] = useState<Domain | null>(null);
  const verify = useMutation(
    trpc.dashboard.channels.verifyDomain.mutationOptions({
      onSuccess: (answer) => {
        setChecked(answer);
        queryClient.setQueryData(trpc.dashboard.channels.domains.queryKey(), (old: Domains | undefined) =>
          old ? { ...old, domains: old.domains.map((d) => (d.domain === answer.domain ? answer : d)) } : old,
        );
      },
    }),
  );
  const remove = useMutation(trpc.dashboard.channels.deleteDomain.mutationOptions({ onSuccess: () => void onChange() }));
  const shown = checked ?? domain;
  const headingId = `domain-${domain.domain.replace(/[^a-z0-9]/g, '-')}`;
  return (
    <article className="dns-record" aria-labelledby={headingId}>
      <h3 id={headingId}>
        {domain.domain} <span className={`badge ${shown.status === 'verified' ? 'active' : 'pending'}`}>{shown.status === 'verified' ? 'Verified' : 'Pending'}</span>
      </h3>
      <p className="hint">
        {shown.status === 'verified'
          ? 'Emails From this domain may go through the shared relay.'
          : 'Publish the verification record at your DNS provider, then press Verify.'}
      </p>
      <ErrorBanner error={verify.error} />
      {shown.records.map((record) => (
        <RecordFacts key={record.purpose} record={record} />
      ))}
      <div className="actions start">
        <button type="button" disabled={verify.isPending} onClick={() => verify.mutate({ domain: domain.domain })}>
          {verify.isPending ? 'Verifying…' : `Verify ${domain.domain}`}
        </button>
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          Delete {domain.domain}
        </button>
      </div>
      <ConfirmDialog
        open={confirming}
        title={`Delete ${domain.domain}?`}
        confirm="Delete domain"
        action={remove}
        onConfirm={() => remove.mutate({ domain: domain.domain })}
        onClose={() => setConfirming(false)}
      >
        Emails From {domain.domain} will no longer go through the shared relay: steps that name it fail when they send.
      </ConfirmDialog>
    </article>
  );
}

function RecordFacts({ record }: { record: Check }) {
  return (
    <dl className="facts" aria-label={PURPOSES[record.purpose]}>
      <div>
        <dt>Record</dt>
        <dd>{PURPOSES[record.purpose]}</dd>
      </div>
      {record.name && (
        <div>
          <dt>Name (TXT)</dt>
          <dd className="wrap"><code>{record.name}</code></dd>
        </div>
      )}
      {record.value && (
        <div>
          <dt>Value</dt>
          <dd className="wrap"><code>{record.value}</code></dd>
        </div>
      )}
      <div>
        <dt>Seen</dt>
        <dd className="wrap">
          {STATUSES[record.status]}
          {record.seen && record.seen.length > 0 && (
            <>
              {': '}
              {record.seen.map((text) => (
                <code key={text}>{text} </code>
              ))}
            </>
          )}
          {record.problem && record.status !== 'no_key' && <> ({record.problem})</>}
        </dd>
      </div>
    </dl>
  );
}
