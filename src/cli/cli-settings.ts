import type { ChannelSettings } from '../services/channels/channel-settings';
import type { WebhookSettings } from '../services/webhooks/webhook-settings';

// What commands need from the configuration besides the database.
export interface CliSettings {
  // Where setup links point (PUBLIC_BASE_URL, else http://localhost:PORT).
  publicBaseUrl: string;
  // Webhook URL rules (WEBHOOK_ALLOW_INSECURE) and the clock.
  webhooks: WebhookSettings;
  // The secrets key and sender defaults, found on first use (the embedded default's key file is
  // made then, as the service's first start makes it).
  channels: () => ChannelSettings;
  // DATA_DIR/imports, where contact imports keep their files.
  importsDir: string;
}
