import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { inferRouterInputs } from '@trpc/server';
import { useState, type FormEvent, type ReactNode } from 'react';
import type { AppRouter } from '../../../../../src/routers/app-router';
import { ErrorBanner } from '../../../components/error-banner';
import { Field } from '../../../components/field';
import { fieldErrors, trpc } from '../../../trpc';
import { durationHint, type Sequence } from '../step-words';
import { WhereFields, type PropertyCondition } from './property-condition-fields';
import { canonical } from './model';
import { entryProblems, goalProblems } from './validate';

// The sequence's entry by event and its goal (docs/activities.md), each its own form beside the
// exit rules and the sending window, saved through the same update procedure: they apply to the
// sequence, not to a version of its steps. Each is optional: unticked and saved, it is sent as
// null, which removes it. Like every save button of the builder, each is enabled only once its
// form differs from what is stored.

type Entry = NonNullable<Sequence['entry']>;
type Goal = NonNullable<Sequence['goal']>;
type Reentry = 'after_exit' | 'never' | 'after';
// The update's input (a condition's `equals` is optional only in the output's typing).
type UpdateInput = inferRouterInputs<AppRouter>['dashboard']['sequences']['update'];

function useSettingsForm(sequence: Sequence, key: 'entry' | 'goal') {
  const queryClient = useQueryClient();
  const [saved, setSaved] = useState(false);
  const [clientErrors, setClientErrors] = useState<Record<string, string>>({});
  // JSON texts (a condition's value) that do not parse yet, by field.
  const [problems, setProblems] = useState<Record<string, string>>({});
  const update = useMutation(
    trpc.dashboard.sequences.update.mutationOptions({
      onSuccess: () => {
        setSaved(true);
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.sequences.pathKey() });
      },
    }),
  );
  const errors = { ...clientErrors, ...fieldErrors(update.error) };
  const onProblem = (field: string, problem: string | null) =>
    setProblems((current) => {
      const next = { ...current };
      if (problem) next[field] = problem;
      else delete next[field];
      return next;
    });
  const blocked = Object.keys(problems).length > 0;
  // A field's setter that also takes back the "saved" note.
  const changed =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      setSaved(false);
    };
  const save = (value: Entry | Goal | null, check: (value: unknown) => Record<string, string>) => {
    update.reset();
    if (blocked) return;
    const found = check(value);
    setClientErrors(found);
    if (Object.keys(found).length === 0) update.mutate({ id: sequence.id, [key]: value } as UpdateInput);
  };
  return { update, errors, saved, changed, onProblem, blocked, save };
}

function SettingsPanel({ id, title, hint, children }: { id: string; title: string; hint: ReactNode; children: ReactNode }) {
  return (
    <section className="panel" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <p className="hint">{hint}</p>
      {children}
    </section>
  );
}

// `where` and the optional texts as the API means them: absent when empty.
function withoutEmpty<T extends Record<string, unknown>>(value: T): T {
  const copy: Record<string, unknown> = { ...value };
  for (const [key, inner] of Object.entries(copy)) if (inner === '' || inner === undefined || (Array.isArray(inner) && inner.length === 0)) delete copy[key];
  return copy as T;
}

export function EntryForm({ sequence }: { sequence: Sequence }) {
  const stored = sequence.entry;
  const [enabled, setEnabled] = useState(stored !== null);
  const [activity, setActivity] = useState(stored?.activity ?? 'cart_abandoned');
  const [where, setWhere] = useState<PropertyCondition[]>(stored?.where ?? []);
  const [reentry, setReentry] = useState<Reentry>(typeof stored?.reentry === 'object' ? 'after' : (stored?.reentry ?? 'after_exit'));
  const [after, setAfter] = useState(typeof stored?.reentry === 'object' ? stored.reentry.after : 'P30D');
  const form = useSettingsForm(sequence, 'entry');
  const { errors, changed } = form;
  const entry: Entry | null = enabled
    ? withoutEmpty({ activity, where, reentry: reentry === 'after' ? { after } : reentry === 'never' ? ('never' as const) : undefined })
    : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    form.save(entry, entryProblems);
  };
  return (
    <SettingsPanel id="entry-heading" title="Entry by activity" hint="While the sequence is active, each matching activity enrolls its contact, with every enrollment rule.">
      <form onSubmit={submit} noValidate>
        <label className="choice field">
          <input type="checkbox" checked={enabled} onChange={(e) => changed(setEnabled)(e.target.checked)} />
          Enroll the contact of an activity
        </label>
        {enabled && (
          <>
            <Field label="Entry activity" hint="Its name, as recorded (case-sensitive): cart_abandoned." value={activity} error={errors['entry.activity'] ?? errors.entry} onChange={(e) => changed(setActivity)(e.target.value)} />
            <WhereFields legend="Only when its properties" where={where} prefix="entry.where" errors={errors} onProblem={form.onProblem} onChange={changed(setWhere)} />
            <fieldset className="field">
              <legend>Enroll a contact again</legend>
              {(
                [
                  ['after_exit', 'Once its previous run has ended (the default)'],
                  ['never', 'Never: one run by an activity per contact'],
                  ['after', 'Once a time has passed since its previous run started'],
                ] as const
              ).map(([value, text]) => (
                <label className="choice" key={value}>
                  <input type="radio" name={`${sequence.id}-reentry`} checked={reentry === value} onChange={() => changed(setReentry)(value)} />
                  {text}
                </label>
              ))}
              {errors['entry.reentry'] && <p className="error">{errors['entry.reentry']}</p>}
            </fieldset>
            {reentry === 'after' && (
              <Field
                label="Again after"
                hint={<>ISO 8601: <code>P30D</code> 30 days. {durationHint(after)}</>}
                value={after}
                error={errors['entry.reentry.after']}
                onChange={(e) => changed(setAfter)(e.target.value)}
              />
            )}
          </>
        )}
        <SettingsFooter form={form} what="Entry" dirty={canonical(entry) !== canonical(stored)} />
      </form>
    </SettingsPanel>
  );
}

export function GoalForm({ sequence }: { sequence: Sequence }) {
  const stored = sequence.goal;
  const [enabled, setEnabled] = useState(stored !== null);
  const [activity, setActivity] = useState(stored?.activity ?? 'checkout_completed');
  const [where, setWhere] = useState<PropertyCondition[]>(stored?.where ?? []);
  const [within, setWithin] = useState(stored?.within ?? '');
  const form = useSettingsForm(sequence, 'goal');
  const { errors, changed } = form;
  const goal: Goal | null = enabled ? withoutEmpty({ activity, where, within: within.trim() }) : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    form.save(goal, goalProblems);
  };
  return (
    <SettingsPanel id="goal-heading" title="Goal" hint="A run whose contact has a matching activity completes at once as converted (goal_met), wherever it is.">
      <form onSubmit={submit} noValidate>
        <label className="choice field">
          <input type="checkbox" checked={enabled} onChange={(e) => changed(setEnabled)(e.target.checked)} />
          Convert a run on an activity
        </label>
        {enabled && (
          <>
            <Field label="Goal activity" hint="Its name, as recorded: checkout_completed, order_placed." value={activity} error={errors['goal.activity'] ?? errors.goal} onChange={(e) => changed(setActivity)(e.target.value)} />
            <WhereFields legend="Only when its properties" where={where} prefix="goal.where" errors={errors} onProblem={form.onProblem} onChange={changed(setWhere)} />
            <Field
              label="Within (optional)"
              hint={<>Of the run&apos;s start, ISO 8601: <code>P7D</code> 7 days. Empty: any time while the run is active. {durationHint(within)}</>}
              value={within}
              error={errors['goal.within']}
              onChange={(e) => changed(setWithin)(e.target.value)}
            />
          </>
        )}
        <SettingsFooter form={form} what="Goal" dirty={canonical(goal) !== canonical(stored)} />
      </form>
    </SettingsPanel>
  );
}

function SettingsFooter({ form, what, dirty }: { form: ReturnType<typeof useSettingsForm>; what: string; dirty: boolean }) {
  return (
    <>
      <ErrorBanner error={form.update.error} />
      {Object.keys(form.errors).length > 0 && !form.update.error && (
        <p className="banner error" role="alert">
          Please correct the fields marked above: nothing was saved.
        </p>
      )}
      {form.blocked && <p className="banner warning">A value above is not valid JSON yet: it must be before saving.</p>}
      {form.saved && (
        <p className="banner ok" role="status">
          {what} saved.
        </p>
      )}
      <div className="actions start">
        <button type="submit" disabled={!dirty || form.update.isPending || form.blocked}>
          Save {what.toLowerCase()}
        </button>
      </div>
    </>
  );
}
