import Ajv2020 from 'ajv/dist/2020';
import { expect } from 'chai';
import { AUTHENTICATION_MESSAGES } from '../../src/errors/app-errors';
import { ERROR_CODES_BY_STATUS } from '../../src/errors/error-codes';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { appRouter } from '../../src/routers/app-router';

// What the reference (/docs) shows must be what the API does: every example fits its schema and
// the error-code table, and no parameter carries a value that "Try it out" would send.

type Media = { schema?: unknown; example?: unknown };
type Response = { $ref?: string; content?: Record<string, Media>; headers?: Record<string, unknown> };
type Operation = { parameters?: Array<Record<string, unknown> & { name: string; in: string; schema?: Record<string, unknown> }>; requestBody?: { content?: Record<string, Media> }; responses: Record<string, Response> };
type Document = { paths: Record<string, Record<string, Operation>>; components: { responses: Record<string, Response> } };

const document = JSON.parse(JSON.stringify(buildOpenApiDocument(appRouter))) as Document;
const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, path, method, operation })));
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
ajv.addSchema(document as object, 'openapi.json');
const escape = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');

// Every response of every operation, with the JSON pointer of its media (shared ones once each).
function responses(): Array<{ where: string; status: string; pointer: string[]; response: Response }> {
  const all = operations.flatMap(({ key, path, method, operation }) =>
    Object.entries(operation.responses)
      .filter(([, response]) => !response.$ref)
      .map(([status, response]) => ({ where: `${key} ${status}`, status, pointer: ['paths', path, method, 'responses', status], response })),
  );
  const sharedStatus = new Map<string, string>();
  for (const { operation } of operations) {
    for (const [status, response] of Object.entries(operation.responses)) if (response.$ref) sharedStatus.set(response.$ref.split('/').pop()!, status);
  }
  for (const [name, response] of Object.entries(document.components.responses)) {
    all.push({ where: `components.responses.${name}`, status: sharedStatus.get(name)!, pointer: ['components', 'responses', name], response });
  }
  return all;
}

describe('the OpenAPI document as the reference page shows it', () => {
  it('gives no parameter a value that "Try it out" would send (no example, examples or default)', () => {
    const prefilled = operations.flatMap(({ key, operation }) =>
      (operation.parameters ?? [])
        .filter((p) => p.example !== undefined || p.examples !== undefined || p.schema?.example !== undefined || p.schema?.examples !== undefined || p.schema?.default !== undefined)
        .map((p) => `${key}: ${p.in} ${p.name}`),
    );
    expect(prefilled).to.deep.equal([]);
    const idempotency = operations.find((o) => o.key === 'POST /contacts')!.operation.parameters!.find((p) => p.name === 'Idempotency-Key')!;
    expect(idempotency.description).to.contain('for example `order-7781-create-contact`');
  });

  it('has every response example fit its schema', () => {
    const failures: string[] = [];
    for (const { where, pointer, response } of responses()) {
      const media = response.content?.['application/json'];
      if (!media || media.example === undefined) continue;
      const validate = ajv.getSchema(`openapi.json#/${[...pointer, 'content', 'application/json', 'schema'].map(escape).join('/')}`)!;
      if (!validate(media.example)) failures.push(`${where}: ${ajv.errorsText(validate.errors)}`);
    }
    expect(failures).to.deep.equal([]);
  });

  it('pairs every error example with a code of its status in the error-code table, and a 401 message with its own code', () => {
    const failures: string[] = [];
    for (const { where, status, response } of responses()) {
      const example = response.content?.['application/json']?.example as { error?: string; code?: string; details?: unknown[] } | undefined;
      if (Number(status) < 400 || !example) continue;
      const codes = (ERROR_CODES_BY_STATUS as Record<string, readonly string[]>)[status] ?? [];
      if (!codes.includes(example.code!)) failures.push(`${where}: code ${example.code} is not one of ${status}'s (${codes.join(', ')})`);
      if (status === '401' && AUTHENTICATION_MESSAGES[example.code as keyof typeof AUTHENTICATION_MESSAGES] !== example.error) {
        failures.push(`${where}: "${example.error}" is not the message of ${example.code}`);
      }
      if (example.code === 'validation_failed' && !(Array.isArray(example.details) && example.details.length > 0)) {
        failures.push(`${where}: a validation failure without details`);
      }
    }
    expect(failures).to.deep.equal([]);
  });

  it('declares the rate-limit headers once per operation: on its successes and on 429, not under every error', () => {
    const repeated = responses()
      .filter(({ status, response }) => Number(status) >= 400 && status !== '429' && response.headers?.RateLimit !== undefined)
      .map(({ where }) => where);
    expect(repeated).to.deep.equal([]);
    const list = operations.find((o) => o.key === 'GET /contacts')!.operation.responses;
    expect(list['200']!.headers).to.have.keys('X-Request-Id', 'RateLimit', 'RateLimit-Policy');
    expect(list['429']!.$ref).to.equal('#/components/responses/RateLimited');
    expect(document.components.responses.RateLimited!.headers).to.include.keys('RateLimit', 'Retry-After');
  });
});
