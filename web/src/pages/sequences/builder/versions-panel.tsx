import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { QueryState } from '../../../components/query-state';
import { SelectField } from '../../../components/select-field';
import { When } from '../../../components/when';
import { trpc } from '../../../trpc';
import { StepText } from '../step-text';
import type { Sequence, Step } from '../step-words';
import { diffVersions } from './version-diff';

// The version history: each version's steps in words, and what changed between any two.

export function VersionsPanel({ sequence }: { sequence: Sequence }) {
  const versions = useQuery(trpc.dashboard.sequences.versions.queryOptions({ id: sequence.id }));
  const webhooks = useQuery(trpc.dashboard.webhooks.list.queryOptions());
  const webhookUrl = (id: string) => webhooks.data?.webhooks.find((w) => w.id === id)?.url;
  return (
    <section className="panel versions" aria-labelledby="versions-heading">
      <h2 id="versions-heading">Versions</h2>
      <QueryState query={versions} loading="Loading versions…" isEmpty={(data) => data.versions.length === 0} empty="No versions yet: the first is made when steps are first saved.">
        {({ versions: list }) => (
          <>
            {list.map((version) => (
              <details key={version.version}>
                <summary>
                  Version {version.version}
                  {version.version === sequence.version ? ' (current)' : ''} · {version.steps.length} {version.steps.length === 1 ? 'step' : 'steps'} · saved{' '}
                  <When iso={version.createdAt} />
                </summary>
                <ol>
                  {(version.steps as Step[]).map((step) => (
                    <li key={step.id}>
                      <code>{step.id}</code>: <StepText step={step} context={{ window: sequence.sendingWindow, webhookUrl }} />
                    </li>
                  ))}
                </ol>
              </details>
            ))}
            {list.length > 1 && <Compare versions={list} window={sequence.sendingWindow} webhookUrl={webhookUrl} />}
          </>
        )}
      </QueryState>
    </section>
  );
}

type Version = { version: number; steps: unknown[] };

function Compare({ versions, window, webhookUrl }: { versions: readonly Version[]; window: Sequence['sendingWindow']; webhookUrl: (id: string) => string | undefined }) {
  // Until chosen: the current version against the one before, whichever they are now.
  const [fromChoice, setFrom] = useState<number | null>(null);
  const [toChoice, setTo] = useState<number | null>(null);
  const from = fromChoice ?? versions[1]!.version;
  const to = toChoice ?? versions[0]!.version;
  const options = versions.map((v) => [String(v.version), `Version ${v.version}`] as const);
  const before = versions.find((v) => v.version === from)?.steps ?? [];
  const after = versions.find((v) => v.version === to)?.steps ?? [];
  const diff = diffVersions(before as never, after as never);
  const words = (step: unknown) => <StepText step={step as Step} context={{ window, webhookUrl }} />;
  const nothing = diff.added.length + diff.removed.length + diff.changed.length + diff.moved.length === 0;
  return (
    <div className="diff">
      <h3>Compare two versions</h3>
      <div className="field-pair">
        <SelectField label="From version" options={options} value={String(from)} onChange={(e) => setFrom(Number(e.target.value))} />
        <SelectField label="To version" options={options} value={String(to)} onChange={(e) => setTo(Number(e.target.value))} />
      </div>
      <div aria-live="polite" role="region" aria-label={`Changes from version ${from} to version ${to}`}>
        {nothing && <p>No difference: the same steps in the same order.</p>}
        {diff.added.length > 0 && (
          <>
            <h4>Added</h4>
            <ul className="added">
              {diff.added.map((step) => (
                <li key={step.id}>
                  <code>{step.id}</code>: {words(step)}
                </li>
              ))}
            </ul>
          </>
        )}
        {diff.removed.length > 0 && (
          <>
            <h4>Removed</h4>
            <ul className="removed">
              {diff.removed.map((step) => (
                <li key={step.id}>
                  <code>{step.id}</code>: {words(step)}
                </li>
              ))}
            </ul>
          </>
        )}
        {diff.changed.length > 0 && (
          <>
            <h4>Changed</h4>
            <ul className="changed">
              {diff.changed.map((change) => (
                <li key={change.id}>
                  <code>{change.id}</code> ({change.fields.join(', ')}): {words(change.before)} → {words(change.after)}
                  {change.details.length > 0 && (
                    <ul className="change-details">
                      {change.details.map((detail) => (
                        <li key={detail}>{detail}</li>
                      ))}
                    </ul>
                  )}
                </li>
              ))}
            </ul>
          </>
        )}
        {diff.moved.length > 0 && (
          <>
            <h4>Moved</h4>
            <ul>
              {diff.moved.map((m) => (
                <li key={m.id}>
                  <code>{m.id}</code>: from place {m.from} to {m.to}
                </li>
              ))}
            </ul>
          </>
        )}
        {diff.unchanged > 0 && <p className="meta">{diff.unchanged} {diff.unchanged === 1 ? 'step' : 'steps'} unchanged.</p>}
      </div>
    </div>
  );
}
