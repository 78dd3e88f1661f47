/// <reference types="vite/client" />
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type uPlot from 'uplot';
import { QueryState } from '../../components/query-state';
import { Table } from '../../components/table';
import { trpc } from '../../trpc';

// The sequence's analytics (docs/analytics.md): per step, the runs that reached it, completed,
// skipped (by reason) or failed it, drawn as a funnel, and those waiting at it now; per day over
// 30 days, enrollments, completions, exits and messages, drawn with uPlot and given as text and
// as a table too (a canvas says nothing to a screen reader). A sequence with a goal, split steps
// or wait_for steps also shows its conversions (in the funnel, per day), its variants and how its
// waits ended; one without them shows none of that.
//
// uPlot: about 20 KB gzipped with its CSS (recharts 3 with its dependencies is several times
// that, echarts far more), well kept, and fast on a phone; its canvas is hidden from assistive
// technology, and the same figures are in the summary and the table below it. It is loaded
// only when this panel draws (its own chunk), so no other page pays for it.

type Stats = NonNullable<ReturnType<typeof useStats>['data']>['stats'];
type Day = Stats['days'][number];

const DAYS = 30;
const REASONS: Record<string, string> = {
  exit_rule: 'exit rule',
  unenrolled: 'unenrolled',
  step_failed: 'a step failed',
  step_missing: 'step missing',
  contact_deleted: 'contact deleted',
  unsubscribed: 'unsubscribed',
  suppressed: 'suppressed',
  no_email: 'no email',
  no_phone: 'no phone',
  invalid_phone: 'invalid phone',
  cancelled: 'cancelled',
  failed: 'failed',
  completed: 'completed from outside',
};

// Colours told apart without hue too (each series also has its own dash), with 4.5:1 on white.
const RUN_SERIES = [
  { key: 'enrollments', label: 'Enrollments', color: '#1f5fbf', dash: [] },
  { key: 'completions', label: 'Completions', color: '#1d6b3a', dash: [6, 3] },
  { key: 'exits', label: 'Exits', color: '#b3261e', dash: [2, 3] },
] as const;
const CONVERSION_SERIES = { key: 'conversions', label: 'Conversions', color: '#6b3fa0', dash: [10, 3, 2, 3] } as const;
const RUN_SERIES_WITH_CONVERSIONS = [...RUN_SERIES, CONVERSION_SERIES] as const;
const MESSAGE_SERIES = [
  { key: 'sent', label: 'Sent', color: '#1f5fbf', dash: [] },
  { key: 'delivered', label: 'Delivered', color: '#1d6b3a', dash: [6, 3] },
  { key: 'read', label: 'Read', color: '#6b3fa0', dash: [10, 3, 2, 3] },
  { key: 'failed', label: 'Failed', color: '#b3261e', dash: [2, 3] },
] as const;

function useStats(id: string) {
  return useQuery(trpc.dashboard.sequences.stats.queryOptions({ id, days: DAYS }));
}

const percent = (part: number, whole: number) => (whole === 0 ? '–' : `${((part / whole) * 100).toLocaleString('en', { maximumFractionDigits: 1 })}%`);
const sum = (values: Record<string, number>) => Object.values(values).reduce((a, b) => a + b, 0);
const n = (value: number) => value.toLocaleString('en');
const byReason = (values: Record<string, number>) =>
  Object.entries(values)
    .sort(([ra, a], [rb, b]) => b - a || (ra < rb ? -1 : 1))
    .map(([reason, count]) => `${n(count)} ${REASONS[reason] ?? reason}`)
    .join(', ');

export function AnalyticsPanel({ sequence }: { sequence: { id: string; goal?: { activity: string } | null } }) {
  const stats = useStats(sequence.id);
  return (
    <section className="panel" aria-labelledby="analytics-heading">
      <h2 id="analytics-heading">Analytics</h2>
      <QueryState query={stats} loading="Loading the figures…">
        {({ stats }) => {
          // Conversions are shown once the sequence has a goal, or had one that runs met.
          const conversions = sequence.goal || stats.conversions.total > 0 ? stats.conversions : null;
          return (
            <>
              <p className="meta">
                The last {DAYS} days, {stats.from} to {stats.to} (UTC). Waiting: active runs at the step now.{' '}
                <span className="analytics-as-of">Counted up to <time dateTime={stats.asOf}>{new Date(stats.asOf).toLocaleTimeString()}</time>: every change before then is in.</span>
              </p>
              {conversions && <ConversionsSummary conversions={conversions} goal={sequence.goal ?? null} />}
              <Funnel steps={stats.steps} conversions={conversions} />
              {stats.variants.length > 0 && <Variants variants={stats.variants} />}
              {stats.waits.length > 0 && <Waits waits={stats.waits} />}
              <Series days={stats.days} conversions={conversions} />
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

type Conversions = Stats['conversions'];

function ConversionsSummary({ conversions, goal }: { conversions: Conversions; goal: { activity: string } | null }) {
  return (
    <p className="conversions-summary">
      <strong>{n(conversions.total)}</strong> {conversions.total === 1 ? 'run' : 'runs'} converted in {conversions.days.length} days
      {goal ? (
        <>
          , by meeting the goal: <code>{goal.activity}</code>.
        </>
      ) : (
        ', by meeting an earlier goal (the sequence has none now).'
      )}
    </p>
  );
}

function Funnel({ steps, conversions }: { steps: Stats['steps']; conversions: Conversions | null }) {
  if (steps.length === 0) return <p>No steps yet, so no funnel: add steps in the Builder above, and this shows how far contacts get through each one.</p>;
  const widest = Math.max(1, ...steps.map((step) => step.reached));
  const converted = new Map((conversions?.steps ?? []).map((step) => [step.stepId, step.converted]));
  return (
    <>
      <h3 id="funnel-heading">Per step</h3>
      <p className="meta funnel-key">
        Bars, as long as the runs that reached the step: <span className="key part-completed" /> completed <span className="key part-skipped" /> skipped{' '}
        <span className="key part-failed" /> failed <span className="key part-open" /> still at the step, or moved to another version.
      </p>
      <ol className="funnel" aria-labelledby="funnel-heading">
        {steps.map((step) => {
          const skipped = sum(step.skipped);
          return (
            <li key={step.stepId}>
              <span className="funnel-step">
                <code>{step.stepId}</code> <span className="meta">{step.type}</span>
              </span>
              <span className="funnel-bar" aria-hidden="true">
                <span className="part-completed" style={{ width: `${(step.completed / widest) * 100}%` }} />
                <span className="part-skipped" style={{ width: `${(skipped / widest) * 100}%` }} />
                <span className="part-failed" style={{ width: `${(step.failed / widest) * 100}%` }} />
                <span className="part-open" style={{ width: `${(Math.max(0, step.reached - step.completed - skipped - step.failed) / widest) * 100}%` }} />
              </span>
              <span className="funnel-figures">
                <span>{n(step.reached)} reached</span> · <span>{n(step.completed)} completed</span> · <span>{n(skipped)} skipped</span> ·{' '}
                <span>{n(step.failed)} failed</span> · <span>{n(step.waiting)} waiting</span>
                {conversions && (
                  <>
                    {' '}
                    · <span className="funnel-converted">{n(converted.get(step.stepId) ?? 0)} converted after it</span>
                  </>
                )}
                {skipped > 0 && <span className="sub">Skipped: {byReason(step.skipped)}</span>}
              </span>
            </li>
          );
        })}
      </ol>
    </>
  );
}

// Per split step, a table of its variants: the runs that took each in the window and those of
// them that converted (one table per step keeps it narrow enough for a phone).
function Variants({ variants }: { variants: Stats['variants'] }) {
  const bySplit = new Map<string, Stats['variants']>();
  for (const variant of variants) bySplit.set(variant.stepId, [...(bySplit.get(variant.stepId) ?? []), variant]);
  return (
    <div className="analytics-block">
      <h3>Split variants</h3>
      {[...bySplit].map(([stepId, rows]) => (
        <div key={stepId}>
          <h4>
            Split step <code>{stepId}</code>
          </h4>
          <Table caption={`Split step ${stepId}: runs per variant, and those that converted`} columns={['Variant', 'Reached', 'Converted', 'Rate']}>
            {rows.map((variant) => (
              <tr key={variant.variant}>
                <th scope="row">
                  <code>{variant.variant}</code>
                </th>
                <td>{n(variant.reached)}</td>
                <td>{n(variant.converted)}</td>
                <td>{percent(variant.converted, variant.reached)}</td>
              </tr>
            ))}
          </Table>
        </div>
      ))}
    </div>
  );
}

// Per wait_for step: its waits that ended in the window, matched by an activity or timed out.
function Waits({ waits }: { waits: Stats['waits'] }) {
  return (
    <div className="analytics-block">
      <h3>Waits for an activity</h3>
      <Table caption="Waits for an activity: how they ended" columns={['Step', 'Matched', 'Timed out']}>
        {waits.map((wait) => (
          <tr key={wait.stepId}>
            <th scope="row">
              <code>{wait.stepId}</code>
            </th>
            <td>{n(wait.matched)}</td>
            <td>
              {n(wait.timedOut)}
              {wait.timedOut > 0 && <span className="meta"> ({percent(wait.timedOut, wait.matched + wait.timedOut)})</span>}
            </td>
          </tr>
        ))}
      </Table>
    </div>
  );
}

function Series({ days, conversions }: { days: Day[]; conversions: Conversions | null }) {
  const convertedOn = new Map((conversions?.days ?? []).map((day) => [day.date, day.conversions]));
  const conversionsOf = (day: Day) => convertedOn.get(day.date) ?? 0;
  const exits = (day: Day) => sum(day.exits);
  const total = (pick: (day: Day) => number) => days.reduce((all, day) => all + pick(day), 0);
  const allExits: Record<string, number> = {};
  for (const day of days) for (const [reason, count] of Object.entries(day.exits)) allExits[reason] = (allExits[reason] ?? 0) + count;
  const runRows = days.map((day) => [day.enrollments, day.completions, exits(day), ...(conversions ? [conversionsOf(day)] : [])]);
  const messageRows = days.map((day) => [day.messages.sent, day.messages.delivered, day.messages.read, day.messages.failed]);
  return (
    <>
      <h3>Per day</h3>
      <p>
        In {days.length} days: {n(total((d) => d.enrollments))} enrollments, {n(total((d) => d.completions))} completions
        {conversions && ` (${n(conversions.total)} converted)`}, {n(total(exits))} exits
        {total(exits) > 0 && ` (${byReason(allExits)})`}; messages: {n(total((d) => d.messages.sent))} sent, {n(total((d) => d.messages.delivered))} delivered,{' '}
        {n(total((d) => d.messages.read))} read, {n(total((d) => d.messages.failed))} failed, {n(total((d) => d.messages.bounced))} bounced,{' '}
        {n(total((d) => d.messages.complained))} complained.
      </p>
      <div className="charts">
        <Chart title="Runs per day" days={days} series={conversions ? RUN_SERIES_WITH_CONVERSIONS : RUN_SERIES} rows={runRows} />
        <Chart title="Messages per day" days={days} series={MESSAGE_SERIES} rows={messageRows} />
      </div>
      <details className="figures">
        <summary>The figures per day, as a table</summary>
        <Table
          caption="Runs and messages per day"
          columns={['Day', 'Enrollments', 'Completions', ...(conversions ? ['Conversions'] : []), 'Exits', 'Sent', 'Delivered', 'Read', 'Failed', 'Bounced', 'Complained']}
        >
          {[...days].reverse().map((day) => (
            <tr key={day.date}>
              <th scope="row">{day.date}</th>
              <td>{n(day.enrollments)}</td>
              <td>{n(day.completions)}</td>
              {conversions && <td>{n(conversionsOf(day))}</td>}
              <td>
                {n(exits(day))}
                {exits(day) > 0 && <span className="sub">{byReason(day.exits)}</span>}
              </td>
              <td>{n(day.messages.sent)}</td>
              <td>{n(day.messages.delivered)}</td>
              <td>{n(day.messages.read)}</td>
              <td>{n(day.messages.failed)}</td>
              <td>{n(day.messages.bounced)}</td>
              <td>{n(day.messages.complained)}</td>
            </tr>
          ))}
        </Table>
      </details>
    </>
  );
}

type SeriesSpec = ReadonlyArray<{ key: string; label: string; color: string; dash: readonly number[] }>;

// One uPlot line chart, as wide as its box (redrawn when the box changes width). The legend is
// HTML beside it; the canvas is hidden from assistive technology (the text and table say it).
function Chart({ title, days, series, rows }: { title: string; days: Day[]; series: SeriesSpec; rows: number[][] }) {
  const box = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    const target = box.current;
    if (!target) return;
    let chart: uPlot | undefined;
    let observer: ResizeObserver | undefined;
    let cancelled = false;
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')])
      .then(([{ default: UPlot }]) => {
        if (cancelled) return;
        const xs = days.map((day) => Date.parse(`${day.date}T00:00:00Z`) / 1000);
        const data: uPlot.AlignedData = [xs, ...series.map((_, i) => rows.map((row) => row[i]!))];
        const width = () => Math.max(240, target.clientWidth);
        chart = new UPlot(
          {
            width: width(),
            height: 200,
            legend: { show: false },
            cursor: { show: false },
            tzDate: (ts) => UPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
            scales: { y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] } },
            axes: [
              { stroke: '#556070', grid: { stroke: '#eef1f5' }, values: '{MMM} {D}' as never },
              { stroke: '#556070', grid: { stroke: '#eef1f5' }, size: 44 },
            ],
            series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, dash: [...s.dash], points: { show: false } }))],
          },
          data,
          target,
        );
        observer = new ResizeObserver(() => chart?.setSize({ width: width(), height: 200 }));
        observer.observe(target);
      })
      .catch(() => setFailed(true));
    return () => {
      cancelled = true;
      observer?.disconnect();
      chart?.destroy();
    };
  }, [days, series, rows]);
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <ul className="legend">
        {series.map((s) => (
          <li key={s.key}>
            <svg width="24" height="10" aria-hidden="true">
              <line x1="0" y1="5" x2="24" y2="5" stroke={s.color} strokeWidth="2" strokeDasharray={s.dash.join(' ')} />
            </svg>
            {s.label}
          </li>
        ))}
      </ul>
      <div ref={box} className="chart-canvas" aria-hidden="true" />
      {failed && <p className="error">The chart could not be drawn; the figures are in the table below.</p>}
    </figure>
  );
}
