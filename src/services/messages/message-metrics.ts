import type { WhatsAppInboundMetrics } from './whatsapp-inbound-metrics';

// What the messages code reports, if given (src/metrics/metrics.ts registers them):
// messages_total{channel,outcome}, one per status a message reaches (sent, captured, delivered,
// read, failed, skipped, cancelled), counted when the change commits; and the provider's
// latency (message_provider_latency_seconds{channel,outcome}), which the sender observes around
// each request: outcome ok, retry (a retryable failure) or fail (a final one).
export interface MessageMetrics {
  total: { inc(labels: { channel: string; outcome: string }, value?: number): void };
  providerLatency: { observe(labels: { channel: string; outcome: 'ok' | 'retry' | 'fail' }, seconds: number): void };
  // channel_pauses_total{channel,code}: a channel (or a step's template) paused by a sender-side
  // failure (channels/channel-pauses.ts), counted once per pause when it commits.
  channelPauses?: { inc(labels: { channel: string; code: string }, value?: number): void };
  // The recipient-side WhatsApp counters, for what Graph answers to a send (131050, 131026).
  whatsapp?: WhatsAppInboundMetrics;
}
