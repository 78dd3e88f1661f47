// OpenAPI 3.1 `webhooks`: what the service POSTs to an endpoint (docs/webhooks.md).
export const WEBHOOK_DELIVERY = {
  event: {
    post: {
      operationId: 'webhookEvent',
      tags: ['Webhooks'],
      // Sent by the service: the receiver checks the signature, not an API key.
      security: [],
      summary: 'An event, POSTed to your endpoint',
      description:
        'Signed per Standard Webhooks: verify with any Standard Webhooks library (for Node, `standardwebhooks`) and the ' +
        'endpoint\'s `whsec_` secret. Answer 2xx within 10 s; anything else is retried after 5 s, 30 s, 2 min, 10 min, ' +
        '1 h, 4 h, then every 12 h (with jitter), at least once, so deduplicate by `webhook-id`. An endpoint failing for ' +
        '3 days is disabled.',
      parameters: [
        { in: 'header', name: 'webhook-id', required: true, description: 'The event id; the same on every retry.', schema: { type: 'string', format: 'uuid' } },
        { in: 'header', name: 'webhook-timestamp', required: true, description: 'Unix seconds when this attempt was signed.', schema: { type: 'string', example: '1795430400' } },
        {
          in: 'header',
          name: 'webhook-signature',
          required: true,
          description: '`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`; two, space-separated, for 24 h after a secret rotation.',
          schema: { type: 'string', example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=' },
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            // Every type's shape, as the events feed serves it.
            schema: { $ref: '#/components/schemas/Event' },
            example: {
              id: '0b7d9c1e-3f4a-4c2b-9e8d-1a2b3c4d5e6f',
              type: 'webhook.test',
              createdAt: '2026-11-22T12:00:00.000Z',
              accountId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
              data: { webhookId: '3f1c2a9e-6a4b-4a7e-9d1e-2b8f0c4d5e6f' },
            },
          },
        },
      },
      responses: {
        '200': { description: 'Any 2xx within 10 s: delivered.' },
        default: { description: 'Anything else, or no answer in 10 s: retried.' },
      },
    },
  },
};
