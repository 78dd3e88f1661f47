// What the webhook code needs from the configuration, passed in (src/config.ts reads it).
export interface WebhookSettings {
  // WEBHOOK_ALLOW_INSECURE: http URLs and special-use addresses allowed (tests, local work).
  allowInsecure: boolean;
  // The clock of the retry schedule, the secret rotation and the disable rule.
  now: () => Date;
}

export const SECURE_WEBHOOKS: WebhookSettings = { allowInsecure: false, now: () => new Date() };
