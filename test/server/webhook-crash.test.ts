import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sendTestEvent, startServer, type StartedServer } from '../support/server-process';
import { startReceiver } from '../support/webhook-receiver';

describe('webhook delivery across a crash (a child process)', function () {
  this.timeout(90_000);
  let dir: string;
  let server: StartedServer | undefined;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-crash-'));
  });
  after(() => {
    if (server) server.child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('delivers an event whose delivery was in flight when the service was SIGKILLed', async () => {
    let answer: 'hang' | 204 = 'hang';
    const receiver = await startReceiver(() => answer);
    try {
      const url = `sqlite:${path.join(dir, 'crash.sqlite')}`;
      // A short attempt timeout makes the claim's lease (3 x) expire within seconds.
      const env = { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_TIMEOUT_MS: '500' };
      server = await startServer(url, env);
      const { eventId } = await sendTestEvent(server, receiver.url);

      const until = Date.now() + 10_000;
      while (receiver.received.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(receiver.received).to.have.length(1);
      server.child.kill('SIGKILL');
      await server.exited;

      answer = 204;
      server = await startServer(url, env);
      const again = Date.now() + 15_000;
      while (receiver.received.length < 2 && Date.now() < again) await new Promise((r) => setTimeout(r, 50));
      expect(receiver.received.map((r) => r.headers['webhook-id'])).to.deep.equal([eventId, eventId]);
      server.child.kill('SIGTERM');
      await server.exited;
      server = undefined;
    } finally {
      await receiver.close();
    }
  });
});
