import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/run-cli';
import { rebindModelsToTestDb } from '../support/db';

describe('admin command line: webhooks', () => {
  let dir: string;
  let databaseUrl: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-cli-'));
    databaseUrl = `sqlite:${path.join(dir, 'cli.sqlite')}`;
  });
  // The CLI opens its own Sequelize instance, which takes the model classes: give them back.
  afterEach(() => rebindModelsToTestDb());
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function cli(...argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, { databaseUrl }, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    return { code, stdout, stderr, json: () => JSON.parse(stdout) };
  }

  it('creates, lists, changes, rotates, tests and deletes an endpoint', async () => {
    const account = (await cli('account:create', '--name', 'Hooks')).json();
    const created = await cli('webhook:create', '--account', account.id, '--url', 'https://hooks.example.com/a', '--events', 'contact.created,run.created');
    expect(created.code, created.stderr).to.equal(0);
    const { webhook, secret } = created.json();
    expect(secret).to.match(/^whsec_/);
    expect(webhook.events).to.deep.equal(['contact.created', 'run.created']);
    expect((await cli('webhook:list', '--account', account.id)).json().map((w: { id: string }) => w.id)).to.deep.equal([webhook.id]);

    const refused = await cli('webhook:update', '--account', account.id, '--id', webhook.id, '--url', 'https://192.168.1.1/');
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.contain('Invalid webhook URL');
    const badType = await cli('webhook:create', '--account', account.id, '--url', 'https://hooks.example.com/a', '--events', 'nope');
    expect(badType.code).to.equal(2);

    const disabled = await cli('webhook:update', '--account', account.id, '--id', webhook.id, '--enabled', 'false', '--events', 'all');
    expect(disabled.json()).to.include({ enabled: false, events: null });
    const rotated = (await cli('webhook:rotate-secret', '--account', account.id, '--id', webhook.id)).json();
    expect(rotated.secret).to.match(/^whsec_/).and.not.equal(secret);
    expect((await cli('webhook:test', '--account', account.id, '--id', webhook.id)).json().eventId).to.match(/^[0-9a-f-]{36}$/);
    expect((await cli('webhook:deliveries', '--account', account.id, '--id', webhook.id)).json()).to.deep.equal({ attempts: [], nextCursor: null });
    expect((await cli('webhook:delete', '--account', account.id, '--id', webhook.id)).code).to.equal(0);
    const gone = await cli('webhook:get', '--account', account.id, '--id', webhook.id);
    expect(gone.code).to.equal(2);
    expect(gone.stderr).to.contain('Webhook not found');
  });
});
