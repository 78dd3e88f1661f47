import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { inferRouterInputs } from '@trpc/server';
import { useState } from 'react';
import type { AppRouter } from '../../../../../src/routers/app-router';
import { ErrorBanner } from '../../../components/error-banner';
import { SelectField } from '../../../components/select-field';
import { fieldErrors, trpc } from '../../../trpc';
import type { Sequence, Step } from '../step-words';
import { Flow } from './flow';
import { LiveSaveDialog, type Position } from './live-save-dialog';
import { canonical, cleaned, duplicate, errorsOfStep, move, newKey, newStep, STEP_TYPE_NAMES, toRows, type Row, type StepType } from './model';
import { AddStepHere } from './add-step-here';
import { branchWarnings } from './branch-warnings';
import { claimsError } from './error-claims';
import { ErrorSummary } from './error-summary';
import { insertAfter } from './insert-step';
import { StepForm } from './step-forms';
import { stepsProblems } from './validate';

// The builder: the sequence's steps as a flow, each with its form; add, remove, reorder and
// duplicate; save through dashboard.sequences.update (the API's rules and 400 details). Saving
// the steps of a sequence with active runs first says what will happen to them (LiveSaveDialog).

// The steps as the update procedure takes them (its input type: an optional `equals` of a
// condition is output-only typing).
type StepsInput = NonNullable<inferRouterInputs<AppRouter>['dashboard']['sequences']['update']['steps']>;

const TYPE_NAME = Object.fromEntries(STEP_TYPE_NAMES) as Record<string, string>;

export function BuilderPanel({ sequence }: { sequence: Sequence }) {
  const queryClient = useQueryClient();
  const [rows, setRows] = useState<Row[]>(() => toRows(sequence.steps as Step[]));
  const [base, setBase] = useState(sequence.version);
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const [errors, setErrors] = useState<Record<string, string>>({});
  // Saves refused with field errors, here or by the API: each shows the summary of them.
  const [refusals, setRefusals] = useState(0);
  // Fields whose text cannot be sent yet, by step key and field.
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [adding, setAdding] = useState<StepType>('wait');
  const [live, setLive] = useState<Position[] | null>(null);
  const [note, setNote] = useState('');

  // A new version saved (here or elsewhere): start again from it.
  if (sequence.version !== base) {
    setBase(sequence.version);
    setRows(toRows(sequence.steps as Step[]));
    setErrors({});
    setProblems({});
    setOpen(new Set());
  }

  const webhooks = useQuery(trpc.dashboard.webhooks.list.queryOptions());
  const endpoints = (webhooks.data?.webhooks ?? []).map((w) => [w.id, w.url] as const);
  const webhookUrl = (id: string) => webhooks.data?.webhooks.find((w) => w.id === id)?.url;

  const steps = rows.map((row) => cleaned(row.step));
  const sent = steps as unknown as StepsInput;
  const dirty = canonical(steps) !== canonical(sequence.steps);
  // Only the steps still here count: a removed or discarded step's text is gone with it.
  const blocked = Object.keys(problems).some((at) => rows.some((row) => at.startsWith(`${row.key}:`)));

  const openWithErrors = (found: Record<string, string>) => {
    const keys = rows.filter((_, i) => Object.keys(errorsOfStep(found, i)).length > 0).map((row) => row.key);
    setOpen((current) => new Set([...current, ...keys]));
  };

  const save = useMutation(
    trpc.dashboard.sequences.update.mutationOptions({
      onSuccess: ({ sequence: saved, moved }) => {
        setLive(null);
        const movedRuns = (moved ?? []).reduce((sum, m) => sum + m.runs, 0);
        setNote(
          saved.version === sequence.version
            ? 'Saved: the steps are the same as the current version\'s.'
            : `Saved as version ${saved.version}.${moved ? ` ${movedRuns} active ${movedRuns === 1 ? 'run' : 'runs'} moved to it.` : ''}`,
        );
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.sequences.pathKey() });
      },
      onError: (error) => {
        const found = fieldErrors(error);
        setErrors(found);
        openWithErrors(found);
        if (Object.keys(found).some((path) => path.startsWith('steps.'))) {
          setLive(null);
          setRefusals((n) => n + 1);
        }
      },
    }),
  );

  const change = (next: Row[], structural: boolean) => {
    setRows(next);
    setNote('');
    if (structural) {
      setErrors({});
      save.reset();
    }
  };
  const setStep = (key: string, step: Step) => {
    // A field changed is a field to check again: its errors go (from the field and the summary).
    const index = rows.findIndex((row) => row.key === key);
    const before = rows[index]!.step as Record<string, unknown>;
    const after = step as Record<string, unknown>;
    setErrors((current) => {
      const kept = Object.entries(current).filter(([path]) => {
        const field = path.startsWith(`steps.${index}.`) ? path.slice(`steps.${index}.`.length).split('.')[0]! : null;
        return field === null || canonical(before[field]) === canonical(after[field]);
      });
      return kept.length === Object.keys(current).length ? current : Object.fromEntries(kept);
    });
    change(rows.map((row) => (row.key === key ? { ...row, step } : row)), false);
  };
  const toggle = (key: string) => {
    // A closed form's text that did not parse is dropped: the step keeps its last good value.
    if (open.has(key)) setProblems((current) => Object.fromEntries(Object.entries(current).filter(([at]) => !at.startsWith(`${key}:`))));
    setOpen((current) => new Set(current.has(key) ? [...current].filter((k) => k !== key) : [...current, key]));
  };

  const add = () => {
    const row = { key: newKey(), step: newStep(adding, rows, endpoints[0]?.[0]) };
    change([...rows, row], true);
    setOpen((current) => new Set([...current, row.key]));
  };

  const insert = (index: number, type: StepType) => {
    const next = insertAfter(rows, index, type, endpoints[0]?.[0]);
    change(next, true);
    setOpen((current) => new Set([...current, next[index + 1]!.key]));
  };

  const submit = async () => {
    save.reset();
    setNote('');
    if (blocked) return;
    // The API's schemas first: the same messages at the same paths, without a round trip.
    const found = stepsProblems(steps);
    setErrors(found);
    if (Object.keys(found).length > 0) {
      setRefusals((n) => n + 1);
      return openWithErrors(found);
    }
    const positions = await queryClient.fetchQuery({ ...trpc.dashboard.sequences.positions.queryOptions({ id: sequence.id }), staleTime: 0 });
    const active = positions.positions.filter((p) => p.activeRuns > 0);
    if (active.length > 0) setLive(active);
    else save.mutate({ id: sequence.id, steps: sent });
  };

  const targets = rows.map((row, i) => [row.step.id, `${i + 1}. ${row.step.id} (${TYPE_NAME[row.step.type] ?? row.step.type})`] as const);
  const stepsRefused = Object.keys(fieldErrors(save.error)).some((path) => path.startsWith('steps.'));
  return (
    <section className="panel builder" aria-labelledby="builder-heading">
      <h2 id="builder-heading">Builder</h2>
      <p className="meta">
        {rows.length === 0 ? 'No steps yet: add the first below.' : `${rows.length} ${rows.length === 1 ? 'step' : 'steps'}, in the order runs take them.`}{' '}
        Saving changed steps makes a new version; runs already started keep theirs unless you move them.
      </p>
      <ErrorSummary rows={rows} errors={errors} refusals={refusals} />
      <Flow
        rows={rows}
        window={sequence.sendingWindow}
        webhookUrl={webhookUrl}
        renderCard={(row, i, words) => {
          const stepErrors = errorsOfStep(errors, i);
          const count = Object.keys(stepErrors).length;
          const unclaimed = Object.entries(stepErrors).filter(([path]) => !claimsError(row.step, path));
          const warnings = branchWarnings(steps, i);
          const isOpen = open.has(row.key);
          const formId = `form-${row.key}`;
          const hidden = <span className="visually-hidden"> step {i + 1}</span>;
          return (
            <div className={`flow-card${count > 0 ? ' invalid' : ''}`}>
              <div className="flow-head">
                <span className="step-number">{i + 1}</span>
                <span className="flow-type">{TYPE_NAME[row.step.type] ?? String(row.step.type)}</span>
                <code className="step-id">{row.step.id}</code>
                <span className="step-what">{words}</span>
              </div>
              {warnings.length > 0 && (
                <ul className="banner warning step-warnings" aria-label={`Warnings about step ${i + 1}`}>
                  {warnings.map((warning) => (
                    <li key={warning}>{warning}</li>
                  ))}
                </ul>
              )}
              {count > 0 && <p className="error">{count === 1 ? 'One problem' : `${count} problems`} in this step.</p>}
              <div className="flow-actions">
                <button type="button" className="secondary" aria-expanded={isOpen} aria-controls={formId} onClick={() => toggle(row.key)}>
                  {isOpen ? 'Close' : 'Edit'}
                  {hidden}
                </button>
                <button type="button" className="secondary" disabled={i === 0} onClick={() => change(move(rows, i, -1), true)}>
                  Move up<span className="visually-hidden"> step {i + 1}</span>
                </button>
                <button type="button" className="secondary" disabled={i === rows.length - 1} onClick={() => change(move(rows, i, 1), true)}>
                  Move down<span className="visually-hidden"> step {i + 1}</span>
                </button>
                <button type="button" className="secondary" onClick={() => change(duplicate(rows, i), true)}>
                  Duplicate{hidden}
                </button>
                <button type="button" className="secondary danger-text" onClick={() => change(rows.filter((r) => r.key !== row.key), true)}>
                  Remove{hidden}
                </button>
              </div>
              {isOpen && (
                <div id={formId} className="flow-form">
                  {unclaimed.length > 0 && (
                    <ul className="error step-errors">
                      {unclaimed.map(([path, message]) => (
                        <li key={path}>{message}</li>
                      ))}
                    </ul>
                  )}
                  <StepForm
                    key={row.key}
                    step={row.step}
                    errors={stepErrors}
                    onChange={(step) => setStep(row.key, step)}
                    context={{
                      sequenceId: sequence.id,
                      targets: targets.filter(([id]) => id !== row.step.id),
                      following: targets[i + 1]?.[1],
                      endpoints,
                      onProblem: (field, problem) =>
                        setProblems((current) => {
                          const next = { ...current };
                          if (problem) next[`${row.key}:${field}`] = problem;
                          else delete next[`${row.key}:${field}`];
                          return next;
                        }),
                    }}
                  />
                </div>
              )}
            </div>
          );
        }}
        renderAfter={(row, i) => (i < rows.length - 1 || open.has(row.key) ? <AddStepHere key={row.key} after={i + 1} onAdd={(type) => insert(i, type)} /> : null)}
      />
      <div className="inline-form add-step">
        <SelectField label="New step" options={STEP_TYPE_NAMES} value={adding} onChange={(e) => setAdding(e.target.value as StepType)} />
        <button type="button" className="secondary" onClick={add}>
          Add step
        </button>
      </div>
      {/* A refusal with fields is listed in the summary at the top; any other is said here. */}
      {!live && !stepsRefused && <ErrorBanner error={save.error} />}
      {blocked && <p className="banner warning">A JSON field above does not parse yet: it must before the steps can be saved.</p>}
      {note && (
        <p className="banner ok" role="status">
          {note}
        </p>
      )}
      <div className="actions start">
        <button type="button" disabled={!dirty || save.isPending || blocked} onClick={() => void submit()}>
          Save steps
        </button>
        <button type="button" className="secondary" disabled={!dirty || save.isPending} onClick={() => change(toRows(sequence.steps as Step[]), true)}>
          Discard changes
        </button>
        {dirty && <span className="meta">Unsaved changes.</span>}
      </div>
      {live && (
        <LiveSaveDialog
          sequence={sequence}
          steps={steps}
          positions={live}
          action={save}
          onConfirm={(stepMap) => save.mutate(stepMap ? { id: sequence.id, steps: sent, moveRuns: { stepMap } } : { id: sequence.id, steps: sent })}
          onClose={() => {
            save.reset();
            setLive(null);
          }}
        />
      )}
    </section>
  );
}
