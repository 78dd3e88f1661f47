import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../src/app';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { appRouter } from '../../src/routers/app-router';
import { silentLogger, testApp } from '../support/app';
import { testDb } from '../support/db';
import { formatProblems, redoclyLint, spectralLint } from '../support/openapi-lint';

// The served document passes both linters integrators use, with no warning at all.
describe('OpenAPI document lint', function () {
  this.timeout(60_000);

  async function served(app = testApp()) {
    const res = await request(app).get('/api/v1/openapi.json').expect(200);
    return res.body as Record<string, unknown> & { servers: Array<{ url: string }>; info: Record<string, unknown> };
  }

  it('has no spectral:oas error or warning', async () => {
    const problems = await spectralLint(await served());
    expect(problems, formatProblems(problems)).to.deep.equal([]);
  });

  it('has no redocly recommended error or warning', async () => {
    const problems = await redoclyLint(await served());
    expect(problems, formatProblems(problems)).to.deep.equal([]);
  });

  it('stays clean with an absolute server URL from PUBLIC_BASE_URL', async () => {
    const app = createApp({ db: testDb(), config: { rateLimitPerMinute: 100, publicBaseUrl: 'https://api.acme-crm.io', publicOrigin: 'https://api.acme-crm.io' }, logger: silentLogger });
    const document = await served(app);
    expect(document.servers).to.deep.equal([{ url: 'https://api.acme-crm.io/api/v1' }]);
    const problems = [...(await spectralLint(document)), ...(await redoclyLint(document))];
    expect(problems, formatProblems(problems)).to.deep.equal([]);
  });

  it('keeps the relative /api/v1 server without PUBLIC_BASE_URL', async () => {
    expect((await served()).servers).to.deep.equal([{ url: '/api/v1' }]);
  });

  it('reports a warning when an operation loses its description or the license goes (the linters really run)', async () => {
    const document = buildOpenApiDocument(appRouter) as unknown as {
      info: { license?: unknown };
      paths: Record<string, Record<string, { description?: string }>>;
    };
    delete document.paths['/contacts']!.post!.description;
    delete document.info.license;
    const problems = [...(await spectralLint(document)), ...(await redoclyLint(document))];
    expect(problems.map((p) => `${p.tool} ${p.rule}`)).to.include.members(['spectral operation-description', 'redocly info-license']);
  });

  it('gives every request and response body a real example, composed from the schemas', async () => {
    const document = (await served()) as unknown as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { example?: unknown }> }; responses: Record<string, { content?: Record<string, { example?: unknown }> }> }>>;
    };
    const bodies = Object.values(document.paths).flatMap((item) =>
      Object.values(item).flatMap((operation) => [
        ...Object.values(operation.requestBody?.content ?? {}),
        ...Object.values(operation.responses).flatMap((response) => Object.values(response.content ?? {})),
      ]),
    );
    expect(bodies.length).to.be.greaterThan(40);
    for (const body of bodies) expect(body.example, JSON.stringify(body)).to.not.equal(undefined);
    const text = JSON.stringify(bodies.map((body) => body.example));
    expect(text).to.not.match(/"string"|additionalProp1/);
    const created = document.paths['/contacts']!.post!.responses['201']!.content!['application/json']!.example as { contact: Record<string, unknown> };
    expect(created.contact).to.include({ email: 'ada@example.com', firstName: 'Ada', createdAt: '2026-11-22T09:30:00.000Z' });
  });
});
