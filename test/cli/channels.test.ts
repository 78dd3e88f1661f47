import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/run-cli';
import { openDatabase } from '../../src/db/database';
import { select } from '../../src/db/sql/statements';
import { withTransaction } from '../../src/db/sql/transaction';
import { pauseChannels } from '../../src/services/channels/channel-pauses';
import { rebindModelsToTestDb } from '../support/db';
import { dkimPrivateKey } from '../support/channels';

// docs/channels.md "From the command line".

describe('admin command line: channels', () => {
  let dir: string;
  let databaseUrl: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'channel-cli-'));
    databaseUrl = `sqlite:${path.join(dir, 'cli.sqlite')}`;
  });
  afterEach(() => rebindModelsToTestDb());
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function cli(...argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, { databaseUrl, publicBaseUrl: 'https://svc.example.com' }, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    return { code, stdout, stderr, json: () => JSON.parse(stdout) };
  }

  it('sets and shows an account\'s email and WhatsApp senders, secrets read from files and stored encrypted with the data folder\'s key', async () => {
    const account = (await cli('account:create', '--name', 'Senders')).json();
    const smtpFile = path.join(dir, 'smtp-url');
    fs.writeFileSync(smtpFile, 'smtps://news:cli-pass-77@smtp.shop.example:465\n');
    const keyFile = path.join(dir, 'dkim.pem');
    fs.writeFileSync(keyFile, dkimPrivateKey());
    const tokenFile = path.join(dir, 'token');
    fs.writeFileSync(tokenFile, 'EAAGclitokenvalue4321\n');

    const set = await cli('channel:email:set', '--account', account.id, '--from', 'news@shop.example', '--smtp-url-file', smtpFile, '--dkim-domain', 'shop.example', '--dkim-selector', 's1', '--dkim-key-file', keyFile, '--max-per-second', '5');
    expect(set.code, set.stderr).to.equal(0);
    expect(set.json()).to.deep.include({ from: 'news@shop.example', maxPerSecond: 5 });
    expect(set.json().smtp).to.deep.equal({ configured: true, host: 'smtp.shop.example:465', source: 'account' });
    expect(set.json().dkim.dnsRecord.name).to.equal('s1._domainkey.shop.example');
    expect(set.stdout).not.to.contain('cli-pass-77');
    expect((await cli('channel:email:get', '--account', account.id)).json()).to.deep.equal(set.json());

    const wa = await cli('channel:whatsapp:set', '--account', account.id, '--phone-number-id', '106540352242922', '--access-token-file', tokenFile);
    expect(wa.code, wa.stderr).to.equal(0);
    expect(wa.json()).to.deep.equal({
      configured: true,
      phoneNumberId: '106540352242922',
      accessToken: { configured: true, last4: '4321' },
      maxPerSecond: 80,
      appSecret: { configured: false },
      verifyToken: { configured: false },
      optOutKeywords: ['STOP', 'UNSUBSCRIBE', 'ARRET', 'BAJA', 'PARAR', 'STOPP'],
      frequencyCap: null,
    });
    const secretFile = path.join(dir, 'app-secret');
    fs.writeFileSync(secretFile, 'cli-app-secret-0042\n');
    const verifyFile = path.join(dir, 'verify-token');
    fs.writeFileSync(verifyFile, 'cli-verify-token-0042\n');
    const own = await cli(
      'channel:whatsapp:set', '--account', account.id, '--phone-number-id', '106540352242922',
      '--app-secret-file', secretFile, '--verify-token-file', verifyFile, '--opt-out-keywords', 'STOP,STOP_PROMOTIONS',
    );
    expect(own.code, own.stderr).to.equal(0);
    expect(own.json()).to.deep.include({ appSecret: { configured: true }, verifyToken: { configured: true }, optOutKeywords: ['STOP', 'STOP_PROMOTIONS'] });
    const capped = await cli('channel:email:set', '--account', account.id, '--from', 'news@shop.example', '--frequency-cap', '2/P1D/wait');
    expect(capped.code, capped.stderr).to.equal(0);
    expect(capped.json().frequencyCap).to.deep.equal({ max: 2, per: 'P1D', whenCapped: 'wait' });
    const badCap = await cli('channel:whatsapp:set', '--account', account.id, '--phone-number-id', '106540352242922', '--frequency-cap', '2/P1D/drop');
    expect(badCap.code).not.to.equal(0);
    expect(badCap.stderr).to.contain('--frequency-cap');
    const waCap = await cli('channel:whatsapp:set', '--account', account.id, '--phone-number-id', '106540352242922', '--frequency-cap', '1/PT12H/skip');
    expect(waCap.json().frequencyCap).to.deep.equal({ max: 1, per: 'PT12H', whenCapped: 'skip' });
    const uncapped = await cli('channel:email:set', '--account', account.id, '--from', 'news@shop.example', '--frequency-cap', 'none');
    expect(uncapped.json().frequencyCap).to.equal(null);
    const back = await cli('channel:whatsapp:set', '--account', account.id, '--phone-number-id', '106540352242922', '--app-secret-file', 'none', '--opt-out-keywords', 'none');
    expect(back.json()).to.deep.include({ appSecret: { configured: false }, verifyToken: { configured: true }, optOutKeywords: ['STOP', 'UNSUBSCRIBE', 'ARRET', 'BAJA', 'PARAR', 'STOPP'] });

    expect(fs.statSync(path.join(dir, 'secrets.key')).mode & 0o777).to.equal(0o600);
    const db = openDatabase(databaseUrl);
    try {
      const rows = JSON.stringify([...(await select(db, 'SELECT * FROM email_channels', [])), ...(await select(db, 'SELECT * FROM whatsapp_channels', []))]);
      expect(rows).not.to.contain('cli-pass-77');
      expect(rows).not.to.contain('EAAGclitokenvalue');
      expect(rows).not.to.contain('cli-app-secret');
      expect(rows).not.to.contain('cli-verify-token');
    } finally {
      await db.close();
    }
  });

  it('channel:email:set resumes a paused email channel (channel.resumed by settings)', async () => {
    const account = (await cli('account:create', '--name', 'Paused')).json();
    const db = openDatabase(databaseUrl);
    try {
      await withTransaction(db, (transaction) =>
        pauseChannels(db, [{ accountId: account.id, channel: 'email', step: null, code: 'smtp_auth_failed', reason: 'smtp auth failed (535 5.7.8)' }], { now: new Date() }, transaction),
      );
    } finally {
      await db.close();
    }
    const set = await cli('channel:email:set', '--account', account.id, '--from', 'news@shop.example');
    expect(set.code, set.stderr).to.equal(0);
    const after = openDatabase(databaseUrl);
    try {
      expect(await select(after, 'SELECT id FROM channel_pauses WHERE account_id = ?', [account.id])).to.have.length(0);
      const events = await select<{ data: string }>(after, "SELECT data FROM events WHERE account_id = ? AND type = 'channel.resumed'", [account.id]);
      expect(events.map((event) => JSON.parse(event.data))).to.deep.equal([{ channel: 'email', by: 'settings', sequenceId: null, stepId: null }]);
    } finally {
      await after.close();
    }
  });

  it('refuses bad settings with exit code 2, naming the flag, and writes nothing', async () => {
    const account = (await cli('account:create', '--name', 'Refused')).json();
    const badUrl = path.join(dir, 'bad-url');
    fs.writeFileSync(badUrl, 'https://smtp.shop.example');
    for (const [argv, flag] of [
      [['channel:email:set', '--account', account.id, '--from', 'not an address'], '--from'],
      [['channel:email:set', '--account', account.id, '--from', 'a@shop.example', '--smtp-url-file', badUrl], '--smtp-url-file'],
      [['channel:email:set', '--account', account.id, '--from', 'a@shop.example', '--max-per-second', '101'], 'maxPerSecond'],
      [['channel:whatsapp:set', '--account', account.id, '--phone-number-id', '1065'], 'accessToken'],
      [['channel:whatsapp:set', '--account', account.id, '--phone-number-id', '1065', '--opt-out-keywords', 'STOP,!!!'], '--opt-out-keywords'],
      [['channel:whatsapp:set', '--account', account.id, '--phone-number-id', '1065', '--app-secret-file', badUrl + '-missing'], '--app-secret-file'],
    ] as const) {
      const result = await cli(...argv);
      expect(result.code, argv.join(' ')).to.equal(2);
      expect(result.stderr).to.contain(flag);
    }
    expect((await cli('channel:email:get', '--account', account.id)).json().from).to.equal(null);
  });

  it('adds, lists, checks and deletes a sending domain, and refuses a bounce domain that is not verified', async () => {
    const account = (await cli('account:create', '--name', 'Domains')).json();
    const added = await cli('channel:email:domain:add', '--account', account.id, '--domain', 'cli-domain.invalid');
    expect(added.code, added.stderr).to.equal(0);
    const domain = added.json();
    expect(domain).to.deep.include({ domain: 'cli-domain.invalid', status: 'pending' });
    expect(domain.records[0]).to.deep.include({ purpose: 'verification', name: '_svc-verify.cli-domain.invalid' });
    expect(domain.records[0].value).to.match(/^svc-verify=[0-9a-f]{32}$/);

    const listed = (await cli('channel:email:domains', '--account', account.id)).json();
    expect(listed.domains.map((d: { domain: string }) => d.domain)).to.deep.equal(['cli-domain.invalid']);
    const checked = await cli('channel:email:domain:verify', '--account', account.id, '--domain', 'cli-domain.invalid');
    expect(checked.code, checked.stderr).to.equal(0);
    expect(checked.json().status).to.equal('pending');

    const bounce = await cli('channel:email:set', '--account', account.id, '--from', 'a@cli-domain.invalid', '--bounce-domain', 'cli-domain.invalid');
    expect(bounce.code).to.equal(2);
    expect(bounce.stderr).to.contain('bounceDomain');
    const bad = await cli('channel:email:domain:add', '--account', account.id, '--domain', 'not a domain');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('--domain');

    const deleted = await cli('channel:email:domain:delete', '--account', account.id, '--domain', 'cli-domain.invalid');
    expect(deleted.code, deleted.stderr).to.equal(0);
    expect((await cli('channel:email:domains', '--account', account.id)).json().domains).to.deep.equal([]);
    const again = await cli('channel:email:domain:delete', '--account', account.id, '--domain', 'cli-domain.invalid');
    expect(again.code).not.to.equal(0);
    expect(again.stderr).to.contain('not found');
  });
});
