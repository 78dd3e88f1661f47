import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// A stand-in for the WhatsApp Cloud API's messages endpoint (Meta's Graph API), on loopback: a
// real HTTP server that checks the documented request (path, bearer token, JSON body of a
// template message) and answers as Graph does, in Graph's error shape when it refuses. It
// records every request, and can be told to hang (never answer), to answer 429 with code
// 130429, a 5xx, or a given 4xx.
//
// Also the other way: a status webhook payload as Meta posts it, signed as Meta signs it, and
// inbound messages (texts, quick-reply buttons, interactive replies) posted to the service's
// webhook with a valid X-Hub-Signature-256 (postWebhook).

export const GRAPH_VERSION = 'v21.0';

export interface GraphRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: unknown;
}

type Behaviour =
  | { kind: 'ok' }
  | { kind: 'hang' }
  | { kind: 'error'; status: number; code: number; message: string; subcode?: number; details?: string }
  | { kind: 'raw'; status: number; body: string };

export interface GraphStandIn {
  // WHATSAPP_API_URL for the client: http://127.0.0.1:PORT/v21.0
  apiUrl: string;
  phoneNumberId: string;
  accessToken: string;
  requests: GraphRequest[];
  // The answer to the requests from now on (ok unless told).
  answer(behaviour: Behaviour): void;
  // The answer to one business number's requests (one of otherPhoneNumberIds, or the main one),
  // whatever answer() says: two accounts on one Graph, one of them hanging.
  answerFor(phoneNumberId: string, behaviour: Behaviour): void;
  hang(): void;
  rateLimited(): void;
  serverError(status?: number): void;
  refuse(status: number, code: number, message: string, subcode?: number): void;
  // Sockets open now (a hanging request's is closed by the client's bound).
  openSockets(): number;
  // What Meta does with the app's webhook: POSTs the payload to url, signed with appSecret.
  postWebhook(url: string, payload: unknown, appSecret: string): Promise<WebhookAnswer>;
  close(): Promise<void>;
}

function graphError(res: ServerResponse, status: number, code: number, message: string, subcode?: number, details?: string) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      error: {
        message,
        type: status === 401 ? 'OAuthException' : 'OAuthException',
        code,
        ...(subcode !== undefined && { error_subcode: subcode }),
        ...(details !== undefined && { error_data: { messaging_product: 'whatsapp', details } }),
        fbtrace_id: 'AbCdEfGhIjKlMnOp',
      },
    }),
  );
}

// What the documented body of a template message must be; null when it is.
function shapeProblem(json: unknown): string | null {
  if (!json || typeof json !== 'object') return 'body must be a JSON object';
  const body = json as Record<string, unknown>;
  if (body.messaging_product !== 'whatsapp') return 'messaging_product must be "whatsapp"';
  if (typeof body.to !== 'string' || !/^\d{6,15}$/.test(body.to)) return 'to must be a phone number in E.164 digits';
  if (body.type !== 'template') return 'type must be "template"';
  const template = body.template as Record<string, unknown> | undefined;
  if (!template || typeof template.name !== 'string' || template.name.length === 0) return 'template.name is required';
  const language = template.language as Record<string, unknown> | undefined;
  if (!language || typeof language.code !== 'string') return 'template.language.code is required';
  if (template.components !== undefined && !Array.isArray(template.components)) return 'template.components must be an array';
  if (typeof body.biz_opaque_callback_data !== 'string' || body.biz_opaque_callback_data.length > 512) {
    return 'biz_opaque_callback_data must be a string of at most 512 characters';
  }
  return null;
}

export async function startGraphStandIn(options: { phoneNumberId?: string; accessToken?: string; otherPhoneNumberIds?: string[] } = {}): Promise<GraphStandIn> {
  const phoneNumberId = options.phoneNumberId ?? '109876543210987';
  const numbers = new Set([phoneNumberId, ...(options.otherPhoneNumberIds ?? [])]);
  const perNumber = new Map<string, Behaviour>();
  const accessToken = options.accessToken ?? 'EAAG-test-token-1234';
  const requests: GraphRequest[] = [];
  const sockets = new Set<Socket>();
  let behaviour: Behaviour = { kind: 'ok' };
  let counter = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        // Checked below.
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json });
      // A GET of the business number (the service's probe of a paused channel): its fields, with
      // the bearer token checked; while the answer is a refusal of the account or its token
      // (not of a template), the same refusal.
      const probed = new RegExp(`^/${GRAPH_VERSION}/(\\d+)(\\?.*)?$`).exec(req.url ?? '')?.[1];
      if (req.method === 'GET' && probed && numbers.has(probed)) {
        if (req.headers.authorization !== `Bearer ${accessToken}`) return graphError(res, 401, 190, 'Invalid OAuth access token - Cannot parse access token');
        const given = perNumber.get(probed) ?? behaviour;
        if (given.kind === 'error' && !(given.code >= 132000 && given.code < 133000)) return graphError(res, given.status, given.code, given.message, given.subcode);
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ id: probed, display_phone_number: '15550783881', verified_name: 'Shop' }));
      }
      const number = new RegExp(`^/${GRAPH_VERSION}/(\\d+)/messages$`).exec(req.url ?? '')?.[1];
      if (req.method !== 'POST' || !number || !numbers.has(number)) {
        return graphError(res, 400, 100, `Unsupported ${req.method} request. Object with ID '${req.url}' does not exist`, 33);
      }
      if (req.headers.authorization !== `Bearer ${accessToken}`) {
        return graphError(res, 401, 190, 'Invalid OAuth access token - Cannot parse access token');
      }
      if (!String(req.headers['content-type'] ?? '').startsWith('application/json') || json === null) {
        return graphError(res, 400, 100, 'Invalid parameter', undefined, 'the body must be JSON');
      }
      const problem = shapeProblem(json);
      if (problem) return graphError(res, 400, 100, 'Invalid parameter', undefined, problem);
      const given = perNumber.get(number) ?? behaviour;
      switch (given.kind) {
        case 'hang':
          return;
        case 'error':
          return graphError(res, given.status, given.code, given.message, given.subcode, given.details);
        case 'raw':
          res.writeHead(given.status, { 'content-type': 'text/plain' });
          return void res.end(given.body);
        case 'ok': {
          counter += 1;
          const to = (json as { to: string }).to;
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end(
            JSON.stringify({
              messaging_product: 'whatsapp',
              contacts: [{ input: to, wa_id: to }],
              messages: [{ id: `wamid.HBgL${String(counter).padStart(6, '0')}`, message_status: 'accepted' }],
            }),
          );
        }
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    apiUrl: `http://127.0.0.1:${port}/${GRAPH_VERSION}`,
    phoneNumberId,
    accessToken,
    requests,
    answer: (next) => void (behaviour = next),
    answerFor: (number, next) => void perNumber.set(number, next),
    hang: () => void (behaviour = { kind: 'hang' }),
    rateLimited: () =>
      void (behaviour = { kind: 'error', status: 429, code: 130429, message: '(#130429) Rate limit hit', details: 'Cloud API message throughput has been reached.' }),
    serverError: (status = 500) => void (behaviour = { kind: 'error', status, code: 131000, message: 'Something went wrong' }),
    refuse: (status, code, message, subcode) => void (behaviour = { kind: 'error', status, code, message, subcode }),
    openSockets: () => sockets.size,
    postWebhook,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface StatusReport {
  id: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  // Unix seconds, as Meta sends it (a string).
  timestamp?: number;
  recipientId?: string;
  bizOpaqueCallbackData?: string;
  errors?: Array<{ code: number; title: string; message?: string; error_data?: { details: string } }>;
}

// A status webhook's body as Meta posts it: one entry, one change, these statuses.
export function statusWebhookPayload(statuses: readonly StatusReport[], phoneNumberId = '109876543210987'): Record<string, unknown> {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
              statuses: statuses.map((s) => ({
                id: s.id,
                status: s.status,
                timestamp: String(s.timestamp ?? Math.floor(Date.now() / 1000)),
                recipient_id: s.recipientId ?? '4915112345678',
                ...(s.bizOpaqueCallbackData && { biz_opaque_callback_data: s.bizOpaqueCallbackData }),
                ...(s.status !== 'failed' && {
                  conversation: { id: 'CONVERSATION_ID', origin: { type: 'marketing' } },
                  pricing: { billable: true, pricing_model: 'CBP', category: 'marketing' },
                }),
                ...(s.errors && { errors: s.errors }),
              })),
            },
          },
        ],
      },
    ],
  };
}

// X-Hub-Signature-256 as Meta sends it: HMAC-SHA256 of the raw body with the app secret.
export function metaSignature(rawBody: string | Buffer, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}

// The service's answer: its status, and its JSON body (read as supertest's is).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface WebhookAnswer { status: number; body: any }

// Meta's webhook delivery: the raw JSON body, signed, within a bound.
export async function postWebhook(url: string, payload: unknown, appSecret: string): Promise<WebhookAnswer> {
  const raw = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': metaSignature(raw, appSecret) },
    body: raw,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let body: WebhookAnswer['body'] = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Kept as text.
  }
  return { status: res.status, body };
}

export type InboundReport =
  | { type: 'text'; from: string; id?: string; body: string; timestamp?: number }
  | { type: 'button'; from: string; id?: string; payload: string; text: string; timestamp?: number }
  | { type: 'interactive'; from: string; id?: string; reply: 'button_reply' | 'list_reply'; replyId: string; title: string; timestamp?: number }
  | { type: 'image'; from: string; id?: string; caption?: string; timestamp?: number };

let inboundCounter = 0;

// Inbound messages as Meta posts them: one entry, one change naming the business number
// (metadata.phone_number_id), the senders' profiles in contacts[] and the messages.
export function inboundWebhookPayload(messages: readonly InboundReport[], phoneNumberId = '109876543210987'): Record<string, unknown> {
  const message = (m: InboundReport) => {
    inboundCounter += 1;
    const base = { from: m.from, id: m.id ?? `wamid.IN${String(inboundCounter).padStart(6, '0')}`, timestamp: String(m.timestamp ?? Math.floor(Date.now() / 1000)), type: m.type };
    switch (m.type) {
      case 'text':
        return { ...base, text: { body: m.body } };
      case 'button':
        return { ...base, context: { from: '15550783881', id: 'wamid.TEMPLATE0001' }, button: { payload: m.payload, text: m.text } };
      case 'interactive':
        return { ...base, interactive: { type: m.reply, [m.reply]: { id: m.replyId, title: m.title } } };
      case 'image':
        return { ...base, image: { id: '1479537139650973', mime_type: 'image/jpeg', sha256: 'abc', ...(m.caption && { caption: m.caption }) } };
    }
  };
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
              contacts: [...new Set(messages.map((m) => m.from))].map((from) => ({ profile: { name: 'Kerry Fisher' }, wa_id: from })),
              messages: messages.map(message),
            },
          },
        ],
      },
    ],
  };
}
