'use strict';
// The REST contract as files, made from the procedures: generated/openapi.json (the document
// GET /api/v1/openapi.json serves) and generated/client/rest-api-types.d.ts (openapi-typescript's
// types of it, which src/client/rest-client.ts imports as './rest-api-types' through the
// "rootDirs" of tsconfig.json). The build runs this before the compile; `npm run openapi` and
// `npm run typecheck` run it on their own. Nothing here is committed: the procedures are the one
// source, and test/http/openapi-generated.test.ts fails when these files and the served document
// disagree.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const generated = path.join(root, 'generated');
const documentFile = path.join(generated, 'openapi.json');
const typesFile = path.join(generated, 'client', 'rest-api-types.d.ts');

async function generate() {
  // The router is TypeScript and this runs before the compile: tsx loads it as `npm run dev` does.
  const tsx = require('tsx/cjs/api');
  const { buildOpenApiDocument } = tsx.require('../src/openapi/document.ts', __filename);
  const { appRouter } = tsx.require('../src/routers/app-router.ts', __filename);
  // As the app serves it with no PUBLIC_BASE_URL: servers is the relative /api/v1.
  const text = `${JSON.stringify(buildOpenApiDocument(appRouter), null, 2)}\n`;
  // openapi-typescript changes the object it is given: it gets its own copy, parsed as a client
  // parses the served one (the drift test does the same).
  const { default: openapiTS, astToString, COMMENT_HEADER } = await import('openapi-typescript');
  const types = COMMENT_HEADER + astToString(await openapiTS(JSON.parse(text)));
  fs.mkdirSync(path.dirname(typesFile), { recursive: true });
  fs.writeFileSync(documentFile, text);
  fs.writeFileSync(typesFile, types);
}

if (require.main === module) {
  generate().then(
    () => process.stderr.write(`wrote ${path.relative(process.cwd(), documentFile)} and ${path.relative(process.cwd(), typesFile)}\n`),
    (error) => {
      process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
      process.exit(1);
    },
  );
}
