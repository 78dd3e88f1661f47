import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';

type Components = NonNullable<OpenAPIObject['components']>;
import type { AppRouter } from '../routers/app-router';
import type { ApiMeta } from '../trpc/init';

// The REST surface's OpenAPI document. trpc-to-openapi writes paths, parameters and schemas
// from the procedures; this adds what it cannot know (STACK.md): the real success statuses,
// the { error } bodies the service really sends, and the rate-limit headers.

type Operation = {
  responses: Record<string, Record<string, unknown>>;
  requestBody?: unknown;
  [key: string]: unknown;
};

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const VALIDATION_ERROR_REF = { $ref: '#/components/schemas/ValidationError' };

const RATE_LIMIT_HEADERS = {
  RateLimit: { $ref: '#/components/headers/RateLimit' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
};

function errorResponse(description: string, example: string, schema: object = ERROR_REF, headers: object = RATE_LIMIT_HEADERS) {
  return {
    description,
    headers,
    content: { 'application/json': { schema, example: { error: example } } },
  };
}

// Statuses every keyed operation can answer, whatever it does. (401 carries the per-IP
// failed-authentication limit's headers.)
const COMMON_ERRORS = {
  401: errorResponse('Missing, unknown, inactive or expired API key', 'Invalid API key'),
  429: errorResponse('Rate limit exceeded: retry after `Retry-After` seconds', 'Rate limit exceeded', ERROR_REF, {
    ...RATE_LIMIT_HEADERS,
    'Retry-After': { $ref: '#/components/headers/Retry-After' },
  }),
  500: errorResponse('Unexpected failure; details are logged, never returned', 'Internal server error'),
  503: errorResponse('The database or the rate-limit store is unavailable; retry after `Retry-After` seconds', 'Database unavailable; retry shortly', ERROR_REF, {
    'Retry-After': { $ref: '#/components/headers/Retry-After' },
  }),
};

const INVALID = errorResponse(
  'Invalid request: the message names the first problem; `details` lists each',
  'email: Invalid email address',
  VALIDATION_ERROR_REF,
);
const TOO_LARGE = errorResponse('Request body over 1 MiB', 'Request body too large (limit 1 MiB)');
const NOT_JSON = errorResponse('Body is not `application/json`', 'Content-Type must be application/json');

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

export function buildOpenApiDocument(router: AppRouter): OpenAPIObject {
  const document = generateOpenApiDocument(router, {
    title: 'Contact and Sequence Enrollment API',
    version: '1.0.0',
    description:
      'Keep contacts in sync and enroll them in automated sequences. Every request needs an API key in the ' +
      '`x-api-key` header. Requests are limited per key per rolling minute (120 unless configured otherwise); ' +
      'the `RateLimit-Policy` header of every response gives the limit in force.',
    baseUrl: '/api/v1',
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

  document.components = {
    ...document.components,
    schemas: Object.fromEntries(
      Object.entries({ ...document.components?.schemas, ...ERROR_SCHEMAS }).filter(([name]) => !name.startsWith('error.')),
    ),
    headers: HEADERS,
  };
  return document;
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

function rewriteResponses(operation: Operation, meta: ApiMeta) {
  const generated = operation.responses['200'];
  const success = meta.successStatus ?? 200;
  const responses: Operation['responses'] = {};
  responses[String(success)] =
    success === 204
      ? { description: generated.description as string, headers: RATE_LIMIT_HEADERS }
      : { ...generated, headers: RATE_LIMIT_HEADERS };
  if (meta.alternateSuccess) {
    responses[String(meta.alternateSuccess.status)] = {
      ...generated,
      description: meta.alternateSuccess.description,
      headers: RATE_LIMIT_HEADERS,
    };
  }
  // A GET with query parameters (the lists) validates them: a 400 like a body's.
  const query = ((operation.parameters ?? []) as Parameter[]).some((p) => p.in === 'query') ? { 400: INVALID } : {};
  const specific = Object.entries((meta.openapi?.errorResponses ?? {}) as Record<string, string>).map(
    ([status, message]) => [status, errorResponse(message, message)],
  );
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
    properties: { error: { type: 'string', description: 'What went wrong, for a person to read.' } },
    required: ['error'],
    additionalProperties: false,
  },
  ValidationError: {
    type: 'object',
    description: 'A 400 for invalid input names each problem. Malformed JSON has no `details`.',
    properties: {
      error: { type: 'string', description: 'The first problem, as `path: message`.', example: 'contacts.3.email: Invalid email address' },
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
    required: ['error'],
    additionalProperties: false,
  },
};

const HEADERS: Components['headers'] = {
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
};
