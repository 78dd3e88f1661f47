import type { WebhookSettings } from '../services/webhooks/webhook-settings';

// What commands need from the configuration besides the database.
export interface CliSettings {
  // Where setup links point (PUBLIC_BASE_URL, else http://localhost:PORT).
  publicBaseUrl: string;
  // Webhook URL rules (WEBHOOK_ALLOW_INSECURE) and the clock.
  webhooks: WebhookSettings;
}
