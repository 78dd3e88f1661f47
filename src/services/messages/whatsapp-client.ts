import http from 'node:http';
import https from 'node:https';
import { boundedPost } from '../bounded-post';

// The WhatsApp Cloud API's messages endpoint (Meta's Graph API): one template message per call,
// `POST {WHATSAPP_API_URL}/{phoneNumberId}/messages` with the account's bearer token. Bounded
// by timeoutMs from start to the end of the answer (src/services/bounded-post.ts: a timer that
// destroys the socket, on every Node), and cut short by `signal` (the dispatcher's stop).
//
// What an answer means:
// - 2xx: taken. `messages[0].id` is the provider's id of the message (null if the body has
//   none: the message was still taken, and sending it again would send it twice; the status
//   webhook finds it by biz_opaque_callback_data).
// - 429, a rate-limit code (130429 and its kin) or a 5xx, no answer in time, a lost connection:
//   retryable. A retry after a timeout or a lost connection may send the message twice (Graph
//   may have taken it): the same biz_opaque_callback_data goes with both.
// - any other 4xx: final, with Graph's error code and message (`131026: Message undeliverable`).

export interface WhatsAppTemplate {
  name: string;
  language: { code: string; policy?: string };
  components?: unknown[];
}

// The documented body of a template message.
export interface WhatsAppMessageRequest {
  messaging_product: 'whatsapp';
  recipient_type: 'individual';
  to: string;
  type: 'template';
  template: WhatsAppTemplate;
  biz_opaque_callback_data: string;
}

export function whatsappTemplateRequest(to: string, template: WhatsAppTemplate, messageKey: string): WhatsAppMessageRequest {
  return { messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'template', template, biz_opaque_callback_data: messageKey };
}

export interface WhatsAppSender {
  // WHATSAPP_API_URL: the Graph API's versioned base (https://graph.facebook.com/v21.0).
  apiUrl: string;
  phoneNumberId: string;
  accessToken: string;
}

export type WhatsAppResult =
  | { ok: true; providerMessageId: string | null; status: number; durationMs: number }
  | {
      ok: false;
      // Worth another attempt later (with the same biz_opaque_callback_data).
      retryable: boolean;
      // Cut short by `signal`: the service stopped it, the receiver did not fail.
      abandoned: boolean;
      status: number | null;
      // Graph's error code and subcode, when its answer had an `error` object.
      code: number | null;
      subcode: number | null;
      // What the message's `error` shows: `131026: Message undeliverable`, `http 502`, `timeout after 10000 ms`.
      error: string;
      durationMs: number;
    };

// Graph's rate limits: the business number's throughput (130429), too many messages to one
// user (131056), the app's or the account's call limits (4, 80007).
const RATE_LIMIT_CODES = new Set([130429, 131056, 4, 80007]);

const MAX_ANSWER_BYTES = 64 * 1024;

// Kept-alive connections per process: Graph is one host, and a TLS handshake per message would
// cost more than the message.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

export async function sendWhatsAppMessage(
  sender: WhatsAppSender,
  request: WhatsAppMessageRequest,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<WhatsAppResult> {
  const url = new URL(`${sender.apiUrl.replace(/\/+$/, '')}/${encodeURIComponent(sender.phoneNumberId)}/messages`);
  const outcome = await boundedPost(
    url,
    {
      authorization: `Bearer ${sender.accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': 'contact-sequence-service-whatsapp/1',
    },
    JSON.stringify(request),
    {
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      agent: url.protocol === 'https:' ? agents['https:'] : agents['http:'],
      maxResponseBytes: MAX_ANSWER_BYTES,
      keepBody: true,
    },
  );
  const { status, durationMs } = outcome;
  if (status === null) {
    return { ok: false, retryable: !outcome.aborted, abandoned: outcome.aborted, status, code: null, subcode: null, error: outcome.error ?? 'no answer', durationMs };
  }
  const answer = parseAnswer(outcome.body);
  if (status >= 200 && status < 300) {
    const id = answer?.messages?.[0]?.id;
    return { ok: true, providerMessageId: typeof id === 'string' && id.length > 0 ? id.slice(0, 191) : null, status, durationMs };
  }
  const graphError = answer?.error;
  const code = typeof graphError?.code === 'number' ? graphError.code : null;
  const subcode = typeof graphError?.error_subcode === 'number' ? graphError.error_subcode : null;
  const retryable = status === 429 || status >= 500 || (code !== null && RATE_LIMIT_CODES.has(code));
  return { ok: false, retryable, abandoned: false, status, code, subcode, error: errorText(status, graphError), durationMs };
}

interface GraphAnswer {
  messages?: Array<{ id?: unknown }>;
  error?: {
    message?: unknown;
    code?: unknown;
    error_subcode?: unknown;
    error_user_msg?: unknown;
    error_data?: { details?: unknown };
  };
}

function parseAnswer(body: Buffer | null): GraphAnswer | null {
  if (!body || body.length === 0) return null;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as GraphAnswer) : null;
  } catch {
    return null;
  }
}

// `131026: Message undeliverable (details)`; `http 502` when the answer has no Graph error.
function errorText(status: number, error: GraphAnswer['error']): string {
  if (!error || typeof error !== 'object') return `http ${status}`;
  const code = typeof error.code === 'number' ? error.code : `http ${status}`;
  const message = typeof error.message === 'string' ? error.message : 'error';
  const details = typeof error.error_data?.details === 'string' ? ` (${error.error_data.details})` : '';
  return `${code}: ${message}${details}`.slice(0, 500);
}
