import type { RequestHandler } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { OpenAPIObject } from 'trpc-to-openapi';

// Interactive reference at /docs, rendered by Swagger UI from the same document as
// /api/v1/openapi.json. Its assets come from the installed swagger-ui-dist package (no CDN),
// and "Try it out" calls this same server (the document's server URL is relative).
export function docsPage(document: OpenAPIObject): RequestHandler[] {
  return [
    ...swaggerUi.serve,
    swaggerUi.setup(document, {
      customSiteTitle: 'Contact and Sequence Enrollment API',
      swaggerOptions: { persistAuthorization: true, displayRequestDuration: true, tryItOutEnabled: true },
    }),
  ];
}
