import https from 'node:https';

// One HTTPS GET of a small document (an SNS signing certificate, a subscription confirmation),
// bounded by timeoutMs from start to the end of the body, and by maxBytes. Never follows
// redirects. A plain timer destroys the request (see bounded-post.ts for why not AbortSignal).
export function boundedGet(url: string, options: { timeoutMs: number; maxBytes: number }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = https.get(url, { headers: { accept: '*/*' } }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) return request.destroy(new Error(`the answer is over ${options.maxBytes} bytes`));
        chunks.push(chunk);
      });
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
      response.on('error', reject);
    });
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
