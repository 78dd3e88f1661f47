// Steps counted by type and outcome for the metrics (src/metrics/metrics.ts):
// sequence_steps_total{type,outcome}. `began`: a wait that started.
export interface StepCount {
  type: string;
  outcome: 'succeeded' | 'failed' | 'began' | 'skipped';
}
