import fs from 'node:fs';
import path from 'node:path';
import { appRouter } from '../routers/app-router';
import { buildOpenApiDocument } from './document';

// `npm run openapi`: writes the document to openapi.json at the repository root, so that a
// diff shows every change to the public contract. The typed REST client's types
// (src/client/rest-api-types.ts) are generated from that file by the same command.
const target = path.resolve(__dirname, '..', '..', 'openapi.json');
fs.writeFileSync(target, `${JSON.stringify(buildOpenApiDocument(appRouter), null, 2)}\n`);
process.stdout.write(`wrote ${path.relative(process.cwd(), target)}\n`);
