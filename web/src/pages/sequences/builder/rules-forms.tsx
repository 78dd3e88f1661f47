import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ErrorBanner } from '../../../components/error-banner';
import { Field } from '../../../components/field';
import { SelectField } from '../../../components/select-field';
import { fieldErrors, trpc } from '../../../trpc';
import type { Sequence } from '../step-words';
import { WeekdaysField, type Weekday } from './fields';
import { canonical } from './model';
import { exitRulesProblems, windowProblems } from './validate';

// The exit rules and the sending window, each its own form, saved through the same update
// procedure (they apply to every run at once and make no new version).

type ExitRule = Sequence['exitWhen'][number];
type Window = NonNullable<Sequence['sendingWindow']>;

function useUpdate(onSaved: () => void) {
  const queryClient = useQueryClient();
  return useMutation(
    trpc.dashboard.sequences.update.mutationOptions({
      onSuccess: () => {
        onSaved();
        void queryClient.invalidateQueries({ queryKey: trpc.dashboard.sequences.pathKey() });
      },
    }),
  );
}

export function ExitRulesForm({ sequence }: { sequence: Sequence }) {
  const [rules, setRules] = useState<ExitRule[]>(sequence.exitWhen);
  const [clientErrors, setClientErrors] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const update = useUpdate(() => setSaved(true));
  const errors = { ...clientErrors, ...fieldErrors(update.error) };
  // As Save steps: nothing to save until the rules differ from the stored ones.
  const dirty = canonical(rules) !== canonical(sequence.exitWhen);
  const set = (next: ExitRule[]) => {
    setRules(next);
    setSaved(false);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.reset();
    const found = exitRulesProblems(rules);
    setClientErrors(found);
    if (Object.keys(found).length === 0) update.mutate({ id: sequence.id, exitWhen: rules });
  };
  return (
    <section className="panel" aria-labelledby="exit-rules-heading">
      <h2 id="exit-rules-heading">Exit rules</h2>
      <p className="hint">A run is cancelled, with the rule as its reason, as soon as its contact meets one; checked again before every step.</p>
      <form onSubmit={submit} noValidate>
        {rules.length === 0 && <p>None: runs end only at an exit step or the end of the steps.</p>}
        {rules.map((rule, i) => {
          const error = errors[`exitWhen.${i}.tag`] ?? errors[`exitWhen.${i}.unsubscribed`] ?? errors[`exitWhen.${i}`];
          return (
            <div className="rule-row" key={i}>
              <SelectField
                label={`Rule ${i + 1}: the contact`}
                options={[
                  ['tag', 'Gets a tag'],
                  ['unsubscribed', 'Unsubscribes'],
                ]}
                value={'tag' in rule ? 'tag' : 'unsubscribed'}
                onChange={(e) => set(rules.map((r, j) => (j === i ? (e.target.value === 'tag' ? { tag: 'purchased' } : { unsubscribed: 'email' }) : r)))}
              />
              {'tag' in rule ? (
                <Field label={`Rule ${i + 1}: tag`} value={rule.tag} error={error} onChange={(e) => set(rules.map((r, j) => (j === i ? { tag: e.target.value } : r)))} />
              ) : (
                <SelectField
                  label={`Rule ${i + 1}: from`}
                  options={[
                    ['email', 'Email'],
                    ['whatsapp', 'WhatsApp'],
                  ]}
                  value={rule.unsubscribed}
                  error={error}
                  onChange={(e) => set(rules.map((r, j) => (j === i ? { unsubscribed: e.target.value as 'email' | 'whatsapp' } : r)))}
                />
              )}
              <button type="button" className="secondary" onClick={() => set(rules.filter((_, j) => j !== i))}>
                Remove rule {i + 1}
              </button>
            </div>
          );
        })}
        <ErrorBanner error={update.error} />
        {saved && (
          <p className="banner ok" role="status">
            Exit rules saved.
          </p>
        )}
        <div className="actions start">
          <button type="button" className="secondary" onClick={() => set([...rules, { tag: '' }])}>
            Add a rule
          </button>
          <button type="submit" disabled={!dirty || update.isPending}>
            Save exit rules
          </button>
        </div>
      </form>
    </section>
  );
}

export function SendingWindowForm({ sequence }: { sequence: Sequence }) {
  const start: Window = sequence.sendingWindow ?? { timeZone: 'UTC', from: '09:00', to: '17:00', weekdays: ['mon', 'tue', 'wed', 'thu', 'fri'] };
  const [enabled, setEnabled] = useState(sequence.sendingWindow !== null);
  const [window, setWindow] = useState<Window>(start);
  const [clientErrors, setClientErrors] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const update = useUpdate(() => setSaved(true));
  const errors = { ...clientErrors, ...fieldErrors(update.error) };
  const dirty = canonical(enabled ? window : null) !== canonical(sequence.sendingWindow);
  const set = (next: Partial<Window>) => {
    const merged = { ...window, ...next };
    for (const key of ['from', 'to', 'weekdays', 'useContactTimeZone'] as const) if (merged[key] === undefined || merged[key] === '') delete merged[key];
    setWindow(merged);
    setSaved(false);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.reset();
    const sent = enabled ? window : null;
    const found = windowProblems(sent);
    setClientErrors(found);
    if (Object.keys(found).length === 0) update.mutate({ id: sequence.id, sendingWindow: sent });
  };
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return (
    <section className="panel" aria-labelledby="window-heading">
      <h2 id="window-heading">Sending window</h2>
      <p className="hint">Tag, update, webhook, email and WhatsApp steps act only inside it; a step due outside waits for the next opening.</p>
      <form onSubmit={submit} noValidate>
        <label className="choice field">
          <input
            type="checkbox"
            checked={enabled}
            onChange={(e) => {
              setEnabled(e.target.checked);
              setSaved(false);
            }}
          />
          Only act inside a sending window
        </label>
        {enabled && (
          <>
            <Field label="Time zone" hint="An IANA zone: Europe/Paris, America/New_York, UTC." list="time-zones" value={window.timeZone} error={errors['sendingWindow.timeZone']} onChange={(e) => set({ timeZone: e.target.value })} />
            <datalist id="time-zones">
              {zones.map((zone) => (
                <option key={zone} value={zone} />
              ))}
            </datalist>
            <label className="choice field">
              <input type="checkbox" checked={window.useContactTimeZone ?? false} onChange={(e) => set({ useContactTimeZone: e.target.checked || undefined })} />
              Use the contact&apos;s own time zone (its customFields.timeZone) when it has one
            </label>
            <div className="field-pair">
              <Field label="From" hint="HH:MM; empty with To: all day." value={window.from ?? ''} error={errors['sendingWindow.from']} onChange={(e) => set({ from: e.target.value })} />
              <Field label="To" hint="HH:MM, after From (24:00 for midnight)." value={window.to ?? ''} error={errors['sendingWindow.to']} onChange={(e) => set({ to: e.target.value })} />
            </div>
            <WeekdaysField
              legend="Days"
              value={window.weekdays}
              error={Object.entries(errors).find(([path]) => path.startsWith('sendingWindow.weekdays'))?.[1]}
              onChange={(weekdays) => set({ weekdays: weekdays as Weekday[] | undefined })}
            />
            {errors.sendingWindow && <p className="error">{errors.sendingWindow}</p>}
          </>
        )}
        <ErrorBanner error={update.error} />
        {saved && (
          <p className="banner ok" role="status">
            Sending window saved.
          </p>
        )}
        <div className="actions start">
          <button type="submit" disabled={!dirty || update.isPending}>
            Save sending window
          </button>
        </div>
      </form>
    </section>
  );
}
