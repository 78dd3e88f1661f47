import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';

type Components = NonNullable<OpenAPIObject['components']>;
import { ACTIVITY_CONFLICT, AUTHENTICATION_MESSAGES, DOMAIN_IN_USE, EMAIL_SENDER_CONFLICTS, SECRETS_KEY_MISSING, SENDER_REQUIRED_EXAMPLE } from '../errors/app-errors';
import { defaultCodeFor, ERROR_CODES_BY_STATUS, type ErrorCode } from '../errors/error-codes';
import type { AppRouter } from '../routers/app-router';
import type { ApiMeta } from '../trpc/init';
import { SEQUENCE_HAS_RUNS } from '../services/sequences/delete-sequence';
import { WEBHOOK_DELIVERY } from './webhook-payload';

// The REST surface's OpenAPI document. trpc-to-openapi writes paths, parameters and schemas
// from the procedures; this adds what it cannot know (docs/architecture.md, "Dependencies and patches"): the real success statuses,
// the { error } bodies the service really sends, and the rate-limit and request-id headers.
//
// The document must stay lint-clean (test/http/openapi-lint.test.ts: spectral:oas and redocly's
// recommended ruleset, 0 warnings). For a new REST operation that means:
// - meta.openapi has `tags` (a tag listed in TAGS below, with its description), `summary`
//   and `description`, and `errorResponses` for each status it can answer besides the common ones;
// - examples come from ONE place per schema: `.meta({ example })` on the zod schema. Every
//   request and response body example in the document is composed from them (composeExample):
//   an object from its properties' examples, an array from one item, an enum from its first
//   value. A string or number schema with no example of its own fails the build of the
//   document, naming its path, so a new field cannot ship with a Swagger placeholder. Give a
//   whole body an example (`.meta({ example })` on the input or output object) only when the
//   composed one would be misleading.
// - response headers are declared once under components.headers and referenced (HEADERS).

type Operation = {
  responses: Record<string, Record<string, unknown>>;
  requestBody?: unknown;
  [key: string]: unknown;
};

const EXAMPLE_REQUEST_ID = '5f0c6d2e-8a7b-4a53-9a39-3c8e1b7d2f40';

// Every answer of the service carries X-Request-Id (src/http/request-id.ts).
const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };

const RATE_LIMIT_HEADERS = {
  ...REQUEST_ID_HEADER,
  RateLimit: { $ref: '#/components/headers/RateLimit' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
};

// An error answer: the body's `code` is one of `codes` (src/errors/error-codes.ts), its schema says
// which; a 400 for invalid input also lists `details`. The example pairs the message with its
// own code (`exampleCode`, else the first of `codes` that is not about idempotency). An error
// declares the request id (and Retry-After where it applies); the rate-limit headers, which
// every keyed answer carries, are declared on the successes and on 429 only, so that the
// reference does not repeat them under every status.
function errorResponse(
  description: string,
  example: string,
  codes: readonly ErrorCode[],
  options: { headers?: object; exampleCode?: ErrorCode; details?: Array<{ path: string; message: string }>; detailsOptional?: boolean } = {},
) {
  const validation = codes.includes('validation_failed');
  // A 409 that names what is in the way carries details too (ConflictWithDetails).
  // One that may also be the Idempotency-Key's 409 (which names nothing) has them only then.
  const base = validation ? 'ValidationError' : options.details ? (options.detailsOptional ? 'ConflictMaybeWithDetails' : 'ConflictWithDetails') : 'Error';
  const schema = {
    allOf: [
      { $ref: `#/components/schemas/${base}` },
      { type: 'object', properties: { code: { type: 'string', enum: [...codes] } } },
    ],
  };
  const code = options.exampleCode ?? codes.find((c) => c !== 'idempotency_in_progress') ?? codes[0];
  const body = { error: example, code, requestId: EXAMPLE_REQUEST_ID, ...(options.details && { details: options.details }) };
  return { description, headers: options.headers ?? REQUEST_ID_HEADER, content: { 'application/json': { schema, example: body } } };
}

const RETRY_AFTER = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };

// The answers many operations share, written once under components.responses and referred to.
const SHARED_RESPONSES = {
  Unauthorized: errorResponse('Missing, unknown, inactive or expired API key', AUTHENTICATION_MESSAGES.invalid_api_key, ERROR_CODES_BY_STATUS[401], {
    exampleCode: 'invalid_api_key',
  }),
  RateLimited: errorResponse('Rate limit exceeded: retry after `Retry-After` seconds', 'Rate limit exceeded', ['rate_limited'], {
    headers: { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER },
  }),
  InternalError: errorResponse('Unexpected failure; details are logged, never returned', 'Internal server error', ['internal_error']),
  Unavailable: errorResponse(
    'The database or the rate-limit store is unavailable; retry after `Retry-After` seconds',
    'Database unavailable; retry shortly',
    ['service_unavailable'],
    { headers: { ...REQUEST_ID_HEADER, ...RETRY_AFTER } },
  ),
  InvalidRequest: errorResponse(
    'Invalid request: the message names the first problem; `details` lists each',
    'email: Invalid email address',
    ERROR_CODES_BY_STATUS[400],
    { details: [{ path: 'email', message: 'Invalid email address' }] },
  ),
  PayloadTooLarge: errorResponse('Request body over 1 MiB', 'Request body too large (limit 1 MiB)', ['payload_too_large']),
  UnsupportedMediaType: errorResponse('Body is not `application/json`', 'Content-Type must be application/json', ['unsupported_media_type']),
};
// A 400 whose example names `field` as the first problem, with its details.
function invalidFieldResponse(description: string, field: string) {
  const message = 'Invalid input';
  return errorResponse(description, `${field}: ${message}`, ERROR_CODES_BY_STATUS[400], { details: [{ path: field, message }] });
}

const shared = (name: keyof typeof SHARED_RESPONSES) => ({ $ref: `#/components/responses/${name}` });

// Statuses every keyed operation can answer, whatever it does. (401 is also what the per-IP
// failed-authentication limit counts.)
const COMMON_ERRORS = { 401: shared('Unauthorized'), 429: shared('RateLimited'), 500: shared('InternalError'), 503: shared('Unavailable') };

const INVALID = shared('InvalidRequest');
const TOO_LARGE = shared('PayloadTooLarge');
const NOT_JSON = shared('UnsupportedMediaType');

// The code of each message an operation declares in its meta's errorResponses.
const CODE_FOR_MESSAGE: Record<string, ErrorCode> = {
  'A contact with this email already exists': 'contact_exists',
  'Sequence is not active': 'sequence_not_active',
  [SEQUENCE_HAS_RUNS]: 'sequence_has_runs',
  'A completed run cannot be paused': 'invalid_run_transition',
  'A pending run cannot be resumed: only a paused one': 'invalid_run_transition',
  'The webhook endpoint is used by a webhook step of an active or paused sequence': 'webhook_in_use',
  [DOMAIN_IN_USE]: 'domain_in_use',
  [SECRETS_KEY_MISSING]: 'secrets_key_missing',
  [ACTIVITY_CONFLICT]: 'activity_conflict',
  [SENDER_REQUIRED_EXAMPLE]: 'sender_required',
};

// A 409 declared for more than one reason: its codes, and the message of the first as the example.
const CONFLICTS_FOR_MESSAGE: Record<string, { codes: ErrorCode[]; example: string }> = {
  [EMAIL_SENDER_CONFLICTS]: { codes: ['secrets_key_missing', 'public_base_url_required'], example: SECRETS_KEY_MISSING },
};

// The details a declared 409 lists, for its example (src/services/sequences/endpoint-users.ts).
const DETAILS_FOR_CODE: Partial<Record<ErrorCode, { example: string; details: Array<{ path: string; message: string }> }>> = {
  activity_conflict: {
    example: `activities.3.id: ${ACTIVITY_CONFLICT}`,
    details: [{ path: 'activities.3.id', message: ACTIVITY_CONFLICT }],
  },
  sender_required: {
    example: SENDER_REQUIRED_EXAMPLE,
    details: [{ path: 'steps.0.from', message: SENDER_REQUIRED_EXAMPLE }],
  },
  domain_in_use: {
    example: "shop.example is the account's bounceDomain: set another bounceDomain (or null) first",
    details: [{ path: 'bounceDomain', message: "shop.example is the account's bounce domain" }],
  },
  webhook_in_use: {
    example:
      'The webhook endpoint is used by the sequence "Welcome" (step "notify"): change those steps, or archive the sequence, before deleting it',
    details: [
      {
        path: 'sequences.7e5d3c1b-9a8f-4e6d-8c4b-2a1f0e9d8c7b.steps.3',
        message: 'Step 4 "notify" of the active sequence "Welcome" (version 2) sends to this endpoint',
      },
    ],
  },
};

// What the body parser can answer, by method. A GET's body is never read, and its input is path
// strings that cannot fail validation (a malformed id is a 404). A DELETE's body is read when
// it is JSON and ignored otherwise: a wrong content type is never a 415.
const BODY_ERRORS: Record<string, object> = {
  GET: {},
  DELETE: { 400: INVALID, 413: TOO_LARGE },
  POST: { 400: INVALID, 413: TOO_LARGE, 415: NOT_JSON },
  PUT: { 400: INVALID, 413: TOO_LARGE, 415: NOT_JSON },
  PATCH: { 400: INVALID, 413: TOO_LARGE, 415: NOT_JSON },
};

// Operation tags, in the order the reference page shows them. A tag used by a procedure and
// missing here fails the build of the document.
const TAGS = [
  { name: 'Contacts', description: 'People you keep in sync: create, upsert by email, read, update, tag and delete.' },
  { name: 'Sequences', description: 'Enroll contacts in automated sequences and read their enrollment.' },
  { name: 'Activities', description: 'What a contact did, posted by your systems: stored once per id, listed on the contact.' },
  { name: 'Events', description: 'What changed in the account, in commit order: poll the feed with its cursor.' },
  { name: 'Channels', description: 'The account\'s own senders: its email relay, From and DKIM key, its WhatsApp number and token, their rates.' },
  { name: 'Webhooks', description: 'Endpoints that receive the account\'s events as signed POSTs (Standard Webhooks), with retries.' },
  { name: 'Suppressions', description: 'Addresses the account never sends to on a channel (bounces, complaints, opt-outs, your own list), whoever the contact is.' },
];

export interface DocumentOptions {
  // Absolute base URL of the service as clients reach it (PUBLIC_BASE_URL); without it the
  // document names the relative `/api/v1`.
  publicBaseUrl?: string;
}

export function buildOpenApiDocument(router: AppRouter, options: DocumentOptions = {}): OpenAPIObject {
  const document = generateOpenApiDocument(router, {
    title: 'Contact and Sequence Enrollment API',
    version: '1.0.0',
    description:
      'Keep contacts in sync and enroll them in automated sequences. Every request needs an API key in the ' +
      '`x-api-key` header. Requests are limited per key per rolling minute (120 unless configured otherwise); ' +
      'the `RateLimit-Policy` header of every response gives the limit in force.',
    baseUrl: options.publicBaseUrl ? `${options.publicBaseUrl.replace(/\/+$/, '')}/api/v1` : '/api/v1',
    securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
  });

  for (const procedure of Object.values(router._def.procedures)) {
    const meta = (procedure as unknown as { _def: { meta?: ApiMeta } })._def.meta;
    if (!meta?.openapi) continue;
    const method = meta.openapi.method.toLowerCase();
    const operation = document.paths?.[meta.openapi.path]?.[method as 'get'] as Operation | undefined;
    if (!operation) throw new Error(`no operation for ${meta.openapi.method} ${meta.openapi.path}`);
    if (method === 'delete') queryToJsonBody(operation);
    rewriteResponses(operation, meta);
  }
  csvImportOperations(document);
  document.info.contact = CONTACT;
  document.info.license = LICENSE;
  const used = new Set(Object.values(document.paths ?? {}).flatMap((item) =>
    Object.values(item as Record<string, Operation>).flatMap((operation) => (operation.tags as string[] | undefined) ?? [])));
  const unknown = [...used].filter((name) => !TAGS.some((tag) => tag.name === name));
  if (unknown.length > 0) throw new Error(`tags without a description in src/openapi/document.ts TAGS: ${unknown.join(', ')}`);
  document.tags = TAGS.filter((tag) => used.has(tag.name));

  document.components = {
    ...document.components,
    schemas: Object.fromEntries(
      Object.entries({ ...document.components?.schemas, ...ERROR_SCHEMAS }).filter(([name]) => !name.startsWith('error.')),
    ),
    headers: HEADERS,
    responses: SHARED_RESPONSES as unknown as NonNullable<Components['responses']>,
  };
  addExamples(document);
  withoutPrefilledParameters(document);
  document.webhooks = WEBHOOK_DELIVERY as unknown as NonNullable<OpenAPIObject['webhooks']>;
  return document;
}

// Contact imports read and write CSV beside JSON (src/http/import-upload.ts): the upload takes a
// text/csv body with its options in the query, and the errors answer is a CSV file.
function csvImportOperations(document: OpenAPIObject) {
  const create = document.paths?.['/contacts/imports']?.post as Operation | undefined;
  const errors = document.paths?.['/contacts/imports/{id}/errors']?.get as Operation | undefined;
  if (!create || !errors) throw new Error('no operation for the contact imports');
  const body = create.requestBody as { content: Record<string, unknown> };
  body.content = {
    'text/csv': {
      schema: { type: 'string', description: 'The CSV file, streamed (at most 50 MB, 1,000,000 rows).' },
      example: 'email,firstName,Plan\r\nada@example.com,Ada,pro\r\n',
    },
    ...body.content,
  };
  const query = (name: string, description: string, example: string) => ({ in: 'query', name, required: false, description, schema: { type: 'string' }, example });
  create.parameters = [
    query('mapping', 'With a text/csv body: the mapping, as a JSON object (URL-encoded).', '{"E-mail":"email"}'),
    query('tags', 'With a text/csv body: tags to add, comma-separated.', 'imported,2026'),
    query('sequenceId', 'With a text/csv body: an active sequence to enroll the contacts into.', '0193f1c2-6a4b-7a7e-9d1e-2b8f0c4d5e6f'),
    { ...query('optedIn', 'With a text/csv body: `true` when these people opted in.', 'true'), schema: { type: 'string', enum: ['true', 'false'] } },
    query('fileName', "With a text/csv body: the file's name, to show in lists.", 'customers.csv'),
    ...((create.parameters as object[] | undefined) ?? []),
  ];
  // The CSV answer is the whole file: the JSON page's `after` and `limit` are tRPC's only.
  errors.parameters = ((errors.parameters ?? []) as Parameter[]).filter((p) => p.in !== 'query');
  delete errors.responses['400'];
  const ok = errors.responses['200']!;
  ok.description = 'The rejected rows, as CSV';
  ok.content = {
    'text/csv': {
      schema: { type: 'string' },
      example: 'row,reason,email,firstName\r\n3,"""email"" (email): Invalid email address",ada@,Ada\r\n',
    },
  };
}

const CONTACT = { name: 'API support', email: 'api@example.com', url: 'https://example.com/support' };
const LICENSE = { name: 'Proprietary', url: 'https://example.com/terms' };

type JsonSchema = Record<string, unknown>;

// Every request and response body gets a media-type example composed from its schema (see the
// convention at the top of this file).
function addExamples(document: OpenAPIObject) {
  const schemas = (document.components?.schemas ?? {}) as Record<string, JsonSchema>;
  const missing: string[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, Operation>)) {
      const bodies: Array<[string, Record<string, unknown> | undefined]> = [
        ['requestBody', (operation.requestBody as { content?: Record<string, Record<string, unknown>> } | undefined)?.content?.['application/json']],
        ...Object.entries(operation.responses).map(([status, response]) =>
          [`responses.${status}`, (response.content as Record<string, Record<string, unknown>> | undefined)?.['application/json']] as [string, Record<string, unknown> | undefined]),
      ];
      for (const [where, media] of bodies) {
        if (!media || media.example !== undefined) continue;
        media.example = composeExample(media.schema as JsonSchema, schemas, `${method.toUpperCase()} ${path} ${where}`, missing);
      }
    }
  }
  if (missing.length > 0) {
    throw new Error(`no example; give these zod schemas .meta({ example }) (src/openapi/document.ts):\n${[...new Set(missing)].join('\n')}`);
  }
}

export function composeExample(schema: JsonSchema, schemas: Record<string, JsonSchema>, where: string, missing: string[]): unknown {
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '');
    const target = schemas[name];
    if (!target) throw new Error(`${where}: unresolved ${schema.$ref}`);
    return composeExample(target, schemas, `${where} (${name})`, missing);
  }
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (branches) {
    const branch = branches.find((b) => b.type !== 'null') ?? branches[0]!;
    return composeExample(branch, schemas, where, missing);
  }
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((t) => t !== 'null') : schema.type;
  if (type === 'object' || schema.properties) {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    // A read-only field a body accepts only to ignore it (a contact sent back) is not shown sent.
    const shown = Object.entries(properties).filter(([, property]) => property.readOnly !== true);
    return Object.fromEntries(shown.map(([name, property]) => [name, composeExample(property, schemas, `${where}.${name}`, missing)]));
  }
  if (type === 'array') return [composeExample((schema.items ?? {}) as JsonSchema, schemas, `${where}[]`, missing)];
  if (type === 'boolean') return true;
  if (type === 'null') return null;
  missing.push(where);
  return undefined;
}

interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema: object;
}

// The REST layer reads a DELETE's JSON body (remove tags); the generator documents DELETE
// input as query parameters only. The document says what the service reads: a JSON body.
function queryToJsonBody(operation: Operation) {
  const parameters = (operation.parameters ?? []) as Parameter[];
  const query = parameters.filter((p) => p.in === 'query');
  if (query.length === 0) return;
  operation.parameters = parameters.filter((p) => p.in !== 'query');
  operation.requestBody = {
    required: true,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          properties: Object.fromEntries(query.map((p) => [p.name, p.schema])),
          required: query.filter((p) => p.required).map((p) => p.name),
        },
      },
    },
  };
}

const IDEMPOTENCY_KEY_PARAMETER = {
  in: 'header',
  name: 'Idempotency-Key',
  required: false,
  description:
    'Makes a retry safe: a repeat with the same key, method, path and JSON body within 24 h replays the first ' +
    'answer (status, body, `Location`) with `Idempotent-Replayed: true` and does nothing else. At most 255 characters; ' +
    'scoped to the account. 401, 429 and 5xx answers are not kept. Use one key per operation you mean to do once, ' +
    'for example `order-7781-create-contact`, and a new key for a new operation.',
  schema: { type: 'string', maxLength: 255 },
};

// Statuses the Idempotency-Key adds to a POST, merged with the operation's own 409.
function idempotencyErrors(conflict: string | undefined): [string, object][] {
  const codes: ErrorCode[] = conflict ? [CODE_FOR_MESSAGE[conflict], 'idempotency_in_progress'] : ['idempotency_in_progress'];
  const description = conflict
    ? `${conflict}; or a request with the same Idempotency-Key is still running`
    : 'A request with the same Idempotency-Key is still running: retry later';
  // A conflict that names what is in the way (activity_conflict) keeps its details.
  const detailed = conflict ? DETAILS_FOR_CODE[CODE_FOR_MESSAGE[conflict]!] : undefined;
  return [
    [
      '409',
      detailed
        ? errorResponse(description, detailed.example, codes, { details: detailed.details, detailsOptional: true })
        : errorResponse(description, conflict ?? 'A request with this Idempotency-Key is still in progress', codes),
    ],
    ['422', errorResponse('The Idempotency-Key was used for a different request', 'This Idempotency-Key was used with a different request', ['idempotency_key_reused'])],
  ];
}

function rewriteResponses(operation: Operation, meta: ApiMeta) {
  const generated = operation.responses['200'];
  const success = meta.successStatus ?? 200;
  const post = meta.openapi!.method === 'POST';
  if (post) operation.parameters = [...((operation.parameters as object[] | undefined) ?? []), IDEMPOTENCY_KEY_PARAMETER];
  const headers = (status: number) => ({
    ...RATE_LIMIT_HEADERS,
    ...(post && { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } }),
    ...(meta.location && status === 201 && { Location: { $ref: '#/components/headers/Location' } }),
  });
  const responses: Operation['responses'] = {};
  responses[String(success)] =
    success === 204
      ? { description: generated.description as string, headers: headers(success) }
      : { ...generated, headers: headers(success) };
  if (meta.alternateSuccess) {
    responses[String(meta.alternateSuccess.status)] = {
      ...generated,
      description: meta.alternateSuccess.description,
      headers: headers(meta.alternateSuccess.status),
    };
  }
  // A GET with query parameters (the lists) validates them: a 400 like a body's.
  const query = ((operation.parameters ?? []) as Parameter[]).some((p) => p.in === 'query') ? { 400: INVALID } : {};
  const declared: Record<string, string> = { ...(meta.openapi?.errorResponses as Record<string, string>) };
  const specific: [string, object][] = Object.entries(declared).map(([status, message]) => [
    status,
    status === '400'
      ? // A declared 400 is still a validation failure (and on a body also malformed JSON): its
        // example is one, naming a field the operation really takes.
        invalidFieldResponse(message, firstField(operation))
      : status === '409' && CONFLICTS_FOR_MESSAGE[message]
        ? errorResponse(message, CONFLICTS_FOR_MESSAGE[message]!.example, CONFLICTS_FOR_MESSAGE[message]!.codes)
        : status === '409' && DETAILS_FOR_CODE[CODE_FOR_MESSAGE[message]!]
        ? errorResponse(message, DETAILS_FOR_CODE[CODE_FOR_MESSAGE[message]!]!.example, [CODE_FOR_MESSAGE[message]!], {
            details: DETAILS_FOR_CODE[CODE_FOR_MESSAGE[message]!]!.details,
          })
        : errorResponse(message, message, status === '409' ? [CODE_FOR_MESSAGE[message]] : [defaultCodeFor(Number(status))]),
  ]);
  if (meta.openapi!.method === 'POST') specific.push(...idempotencyErrors(declared['409']));
  Object.assign(
    responses,
    Object.fromEntries(
      Object.entries({
        ...COMMON_ERRORS,
        ...BODY_ERRORS[meta.openapi!.method],
        ...query,
        ...Object.fromEntries(specific),
      }).sort(([a], [b]) => Number(a) - Number(b)),
    ),
  );
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}

const ERROR_SCHEMAS: Components['schemas'] = {
  Error: {
    type: 'object',
    description: 'Every error answer.',
    properties: {
      error: { type: 'string', description: 'What went wrong, for a person to read.' },
      code: { type: 'string', description: 'Stable, machine-readable: branch on this, not on `error`.' },
      requestId: { type: 'string', description: 'The X-Request-Id of the request, for support.' },
    },
    required: ['error', 'code', 'requestId'],
    additionalProperties: false,
  },
  ValidationError: {
    type: 'object',
    description: 'A 400 for invalid input names each problem. Malformed JSON has no `details`.',
    properties: {
      error: { type: 'string', description: 'The first problem, as `path: message`.', example: 'contacts.3.email: Invalid email address' },
      code: { type: 'string', description: 'Stable, machine-readable: branch on this, not on `error`.' },
      requestId: { type: 'string', description: 'The X-Request-Id of the request, for support.' },
      details: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            path: { type: 'string', description: 'Dotted path of the field in the request.', example: 'contacts.3.email' },
            message: { type: 'string', example: 'Invalid email address' },
          },
          required: ['path', 'message'],
          additionalProperties: false,
        },
      },
    },
    required: ['error', 'code', 'requestId'],
    additionalProperties: false,
  },
  ConflictWithDetails: {
    type: 'object',
    description: 'A 409 that names what is in the way, one entry each in `details`.',
    properties: {
      error: { type: 'string', description: 'What is in the way, for a person to read.' },
      code: { type: 'string', description: 'Stable, machine-readable: branch on this, not on `error`.' },
      requestId: { type: 'string', description: 'The X-Request-Id of the request, for support.' },
      details: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            path: { type: 'string', description: 'Where the obstacle is: `sequences.{id}.steps.{index}`.', example: 'sequences.7e5d3c1b-9a8f-4e6d-8c4b-2a1f0e9d8c7b.steps.3' },
            message: { type: 'string', example: 'Step 4 "notify" of the active sequence "Welcome" (version 2) sends to this endpoint' },
          },
          required: ['path', 'message'],
          additionalProperties: false,
        },
      },
    },
    required: ['error', 'code', 'requestId', 'details'],
    additionalProperties: false,
  },
};
// The same, where the 409 may also be the Idempotency-Key's, which has no details.
ERROR_SCHEMAS!.ConflictMaybeWithDetails = {
  ...(ERROR_SCHEMAS!.ConflictWithDetails as object),
  description: 'A 409 that names what is in the way in `details` (an activity_conflict: the item); `idempotency_in_progress` has none.',
  required: ['error', 'code', 'requestId'],
};

const HEADERS: Components['headers'] = {
  'X-Request-Id': {
    description: 'The request\'s id: the caller\'s `X-Request-Id` when it is 1 to 64 of `A-Z a-z 0-9 . _ -`, otherwise a new UUID. Every log line of the request carries it.',
    schema: { type: 'string', example: '5f0c6a1e-3b7d-4c1a-9e0f-2a6b8d4c7e91' },
  },
  RateLimit: {
    description: 'IETF draft-8 RateLimit: remaining requests (`r`) and seconds until one is free again (`t`).',
    schema: { type: 'string', example: '"api-key"; r=119; t=60' },
  },
  'RateLimit-Policy': {
    description: 'IETF draft-8 RateLimit-Policy: the quota (`q`) per window of `w` seconds.',
    schema: { type: 'string', example: '"api-key"; q=120; w=60' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', example: 30 },
  },
  'Idempotent-Replayed': {
    description: '`true` when this answer is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'], example: 'true' },
  },
  Location: {
    description: 'The created resource: `/api/v1/contacts/{id}` for a contact, `/api/v1/webhooks/{id}` for a webhook endpoint.',
    schema: { type: 'string', example: '/api/v1/contacts/0b7f3c1e-5d2a-4c6b-9e8f-1a2b3c4d5e6f' },
  },
};

// The first query parameter of an operation, else the first property of its JSON body, else
// its first path parameter (a DELETE that checks its id).
function firstField(operation: Operation): string {
  const parameters = (operation.parameters ?? []) as Parameter[];
  const query = parameters.find((p) => p.in === 'query');
  if (query) return query.name;
  const body = (operation.requestBody as { content?: Record<string, { schema?: { properties?: object } }> } | undefined)?.content?.['application/json']?.schema;
  return Object.keys(body?.properties ?? {})[0] ?? parameters.find((p) => p.in === 'path')?.name ?? 'body';
}

// Swagger UI's "Try it out" sends a parameter's example or default as its value: an example
// Idempotency-Key would be reused by every POST, an example filter would narrow every list. No
// parameter carries one; where an example helps, its description gives it in words.
function withoutPrefilledParameters(document: OpenAPIObject) {
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item as Record<string, Operation>)) {
      for (const parameter of (operation.parameters ?? []) as Array<Parameter & { example?: unknown; examples?: unknown }>) {
        delete parameter.example;
        delete parameter.examples;
        const schema = parameter.schema as { example?: unknown; examples?: unknown; default?: unknown } | undefined;
        if (!schema) continue;
        delete schema.example;
        delete schema.examples;
        delete schema.default;
      }
    }
  }
}
