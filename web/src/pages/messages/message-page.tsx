import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ItemPage } from '../../components/item-page';
import { MessageEditor, type MessageStepInput } from '../../components/message-editor';
import { usePageTitle } from '../../components/page-title';
import { Link } from '../../router';
import { trpc } from '../../trpc';

// A message step of a sequence in the message editor: its templates as the current version has
// them, edited and previewed here. Saving belongs to the builder, whose step forms mount the same
// editor; this page changes nothing stored.
export function MessagePage({ sequenceId, stepId }: { sequenceId: string; stepId: string }) {
  const query = useQuery(trpc.dashboard.sequences.get.queryOptions({ id: sequenceId }));
  const step = query.data?.sequence.steps.find((candidate) => candidate.id === stepId);
  usePageTitle(query.data && `${query.data.sequence.name}: message ${stepId}`);
  return (
    <ItemPage
      query={query}
      loading="Loading the sequence…"
      list={{ to: '/sequences', label: 'Sequences' }}
      crumb={({ sequence }) => (
        <>
          <Link to={`/sequences/${sequence.id}`}>{sequence.name}</Link> / step <span className="mono">{stepId}</span>
        </>
      )}
    >
      {({ sequence }) =>
        step && (step.type === 'email' || step.type === 'whatsapp') ? (
          <Editing sequenceId={sequence.id} stepId={stepId} saved={step as MessageStepInput} version={sequence.version} />
        ) : (
          <p className="banner error" role="alert">
            Version {sequence.version ?? '—'} of this sequence has no email or WhatsApp step “{stepId}”.
          </p>
        )
      }
    </ItemPage>
  );
}

function Editing({ sequenceId, stepId, saved, version }: { sequenceId: string; stepId: string; saved: MessageStepInput; version: number | null }) {
  const [step, setStep] = useState(saved);
  return (
    <>
      <p className="meta">
        The {saved.type === 'email' ? 'email' : 'WhatsApp'} step of version {version}. The preview shows your changes; they are not saved from this page.
      </p>
      <MessageEditor sequenceId={sequenceId} stepId={stepId} step={step} onChange={setStep} />
    </>
  );
}
