// What the bounce listener and the provider webhooks report, if given (src/metrics/metrics.ts
// registers it): email_feedback_total{source,kind,outcome}: each report by where it came from
// (dsn, arf, mailbox, ses, sendgrid), what it says (hard_bounce, soft_bounce, complaint,
// delivered, dropped, unsubscribe; `unreadable` and `forged` for mail that named nothing we
// could use) and whether it named a message of ours (matched, unknown, dropped).
export interface FeedbackMetrics {
  feedback: { inc(labels: { source: string; kind: string; outcome: string }, value?: number): void };
}
