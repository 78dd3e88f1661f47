import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { select } from '../../src/db/sql/statements';
import { createWebhook } from '../../src/services/webhooks/endpoints';
import { cliOk, cliRefused, withDatabaseAt } from '../support/cli';
import { rebindModelsToTestDb } from '../support/db';

// sequence:create --steps FILE: a sequence with its definition from a JSON file, the steps
// array alone or { steps, exitWhen, sendingWindow }, refused as the API refuses it. On a SQLite
// file of its own per test, as test/cli/cli.test.ts runs the command line.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let dir: string;
let databaseUrl: string;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function ok(...argv: string[]): Promise<any> {
  return (await cliOk(databaseUrl, argv)).json;
}

function refused(...argv: string[]): Promise<string> {
  return cliRefused(databaseUrl, argv);
}

function file(name: string, content: unknown): string {
  const at = path.join(dir, name);
  fs.writeFileSync(at, typeof content === 'string' ? content : JSON.stringify(content));
  return at;
}

async function stored(): Promise<{ sequences: number; versions: number }> {
  return withDatabaseAt(databaseUrl, async (db) => {
    const count = async (table: string) => Number((await select<{ n: number | string }>(db, `SELECT COUNT(*) AS n FROM ${table}`, []))[0]!.n);
    return { sequences: await count('sequences'), versions: await count('sequence_versions') };
  });
}

const STEPS = [
  { id: 'pause', type: 'wait', duration: 'P1D' },
  { id: 'mark', type: 'tag', add: ['welcomed'] },
  { type: 'exit' },
];

describe('admin command line: sequence:create --steps FILE', () => {
  let accountId: string;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-steps-'));
    databaseUrl = `sqlite:${path.join(dir, 'admin.sqlite')}`;
    accountId = (await ok('account:create', '--name', 'Acme')).id;
  });

  afterEach(() => {
    rebindModelsToTestDb();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('takes a file holding the steps array: version 1, the given ids kept, the others generated, stored', async () => {
    const sequence = await ok('sequence:create', '--account', accountId, '--name', 'Welcome', '--status', 'active', '--steps', file('steps.json', STEPS));
    expect(sequence).to.include({ accountId, name: 'Welcome', status: 'active', version: 1, activeRuns: 0, sendingWindow: null });
    expect(sequence.id).to.match(UUID);
    expect(sequence.exitWhen).to.deep.equal([]);
    expect(sequence.steps.slice(0, 2)).to.deep.equal(STEPS.slice(0, 2));
    expect(sequence.steps[2].type).to.equal('exit');
    expect(sequence.steps[2].id).to.match(/^step-[0-9a-f]{8}$/);

    const rows = await withDatabaseAt(databaseUrl, (db) =>
      select<{ version: number | string; steps: string }>(db, 'SELECT version, steps FROM sequence_versions WHERE sequence_id = ?', [sequence.id]),
    );
    expect(rows).to.have.length(1);
    expect(Number(rows[0]!.version)).to.equal(1);
    expect(JSON.parse(rows[0]!.steps)).to.deep.equal(sequence.steps);
  });

  it('takes a file holding { steps, exitWhen, sendingWindow }', async () => {
    const definition = {
      steps: STEPS.slice(0, 2),
      exitWhen: [{ tag: 'purchased' }, { unsubscribed: 'email' }],
      sendingWindow: { timeZone: 'Europe/Paris', weekdays: ['mon', 'tue'], from: '09:00', to: '17:00' },
    };
    const sequence = await ok('sequence:create', '--account', accountId, '--name', 'Welcome', '--steps', file('definition.json', definition));
    expect(sequence).to.include({ status: 'draft', version: 1 });
    expect(sequence.steps).to.deep.equal(definition.steps);
    expect(sequence.exitWhen).to.deep.equal(definition.exitWhen);
    expect(sequence.sendingWindow).to.deep.equal(definition.sendingWindow);
    const listed = await ok('sequence:list', '--account', accountId);
    expect(listed.map((s: { id: string }) => s.id)).to.deep.equal([sequence.id]);
  });

  it('refuses to make active, or activate, a sequence whose email step has no sender (no step From, no account sender, no EMAIL_FROM)', async () => {
    const email = [{ id: 'hello', type: 'email', subject: 'Hello', html: '<p>Hi</p>' }];
    const active = await refused('sequence:create', '--account', accountId, '--name', 'Welcome', '--status', 'active', '--steps', file('email.json', email));
    expect(active).to.match(/^error: Step "hello" has no sender: give the step a From, or set the account's sender/);
    expect(await stored()).to.deep.equal({ sequences: 0, versions: 0 });
    const draft = await ok('sequence:create', '--account', accountId, '--name', 'Welcome', '--steps', file('email.json', email));
    expect(await refused('sequence:set-status', '--id', draft.id, '--status', 'active')).to.match(/^error: Step "hello" has no sender/);
    await ok('channel:email:set', '--account', accountId, '--from', 'hello@acme.example');
    expect(await ok('sequence:set-status', '--id', draft.id, '--status', 'active')).to.include({ status: 'active' });
  });

  it('an empty steps array makes a sequence without steps (version null), as without --steps', async () => {
    const sequence = await ok('sequence:create', '--account', accountId, '--name', 'Plain', '--steps', file('empty.json', []));
    expect(sequence).to.include({ version: null });
    expect(sequence.steps).to.deep.equal([]);
    expect(await stored()).to.deep.equal({ sequences: 1, versions: 0 });
  });

  describe('refusals: exit 2, one line naming the file and the problem, nothing stored', () => {
    let before: { sequences: number; versions: number };
    beforeEach(async () => {
      before = await stored();
    });
    afterEach(async () => {
      expect(await stored()).to.deep.equal(before);
    });

    it('a file that cannot be read', async () => {
      const missing = path.join(dir, 'missing.json');
      const stderr = await refused('sequence:create', '--account', accountId, '--name', 'S', '--steps', missing);
      expect(stderr).to.contain(`--steps: cannot read ${missing}`).and.contain('ENOENT');
    });

    it('a directory instead of a file', async () => {
      const stderr = await refused('sequence:create', '--account', accountId, '--name', 'S', '--steps', dir);
      expect(stderr).to.contain(`--steps: cannot read ${dir}`);
    });

    it('a file that is not JSON', async () => {
      const bad = file('bad.json', '[{ "type": "exit" ');
      const stderr = await refused('sequence:create', '--account', accountId, '--name', 'S', '--steps', bad);
      expect(stderr).to.contain(`--steps: ${bad} is not JSON`);
    });

    for (const [what, content] of [['a number', '42'], ['null', 'null'], ['a string', '"steps"']]) {
      it(`JSON that is ${what}, neither an array nor an object`, async () => {
        const bad = file('scalar.json', content);
        const stderr = await refused('sequence:create', '--account', accountId, '--name', 'S', '--steps', bad);
        expect(stderr).to.contain(`--steps: ${bad} must hold the steps array or an object { steps, exitWhen, sendingWindow, entry, goal }`);
      });
    }

    // The shape, checked by the API's own schema: the same path and message as its 400.
    const shapes: Array<[string, unknown, string]> = [
      ['an unknown step type', [{ type: 'sms' }], 'steps.0.type: Invalid discriminator value'],
      ['an unknown field in a step', [{ type: 'exit', colour: 'red' }], 'steps.0.colour: Unknown field'],
      ['an unknown top-level field', { steps: [], exitwhen: [] }, 'exitwhen: Unknown field; did you mean "exitWhen"?'],
      ['a time of day that is no time', [{ type: 'wait', until: { time: '25:00' } }], 'steps.0.until.time: A local time of day, HH:MM'],
      ['101 steps', Array.from({ length: 101 }, () => ({ type: 'exit' })), 'steps: At most 100 steps'],
      ['steps that are not an array', { steps: { type: 'exit' } }, 'steps: Invalid input: expected array, received object'],
    ];
    for (const [what, content, message] of shapes) {
      it(`${what}`, async () => {
        const bad = file('shape.json', content);
        const stderr = await refused('sequence:create', '--account', accountId, '--name', 'S', '--steps', bad);
        expect(stderr).to.contain(`--steps: ${bad}: ${message}`);
      });
    }

    // The rules across fields, checked by the service: the path of the API's details, then its message.
    const rules: Array<[string, unknown, string]> = [
      ['a duplicate step id', [{ id: 'a', type: 'exit' }, { id: 'a', type: 'exit' }], 'steps.1.id: Step id "a" is used by step 1 too'],
      ['a branch to an unknown step', [{ id: 'b', type: 'branch', if: { tag: 'x' }, then: 'nowhere', else: 'b2' }, { id: 'b2', type: 'exit' }], 'steps.0.then: Step "b": "nowhere" is not a step of this sequence'],
      ['a cycle without a wait', [{ id: 'a', type: 'branch', if: { tag: 'x' }, then: 'a', else: 'a' }], 'steps.0.then: Step "a": its then goes back to itself, closing the cycle "a" -> "a" with no wait step on it'],
      ['a duration out of range', [{ id: 'w', type: 'wait', duration: 'P2Y' }], 'steps.0.duration: Step "w": P2Y is more than 366 days'],
      ['a tag step without tags', [{ id: 't', type: 'tag' }], 'steps.0.add: Step "t": give at least one tag to add or remove'],
      ['a bad time zone', { sendingWindow: { timeZone: 'Mars/Olympus' } }, 'sendingWindow.timeZone: "Mars/Olympus" is not an IANA time zone'],
    ];
    for (const [what, content, message] of rules) {
      it(`${what}`, async () => {
        const bad = file('rules.json', content);
        const stderr = await refused('sequence:create', '--account', accountId, '--name', 'S', '--steps', bad);
        expect(stderr).to.contain(`error: ${bad}: ${message}`);
      });
    }

    it('a webhook step whose endpoint is another account\'s', async () => {
      const other = await ok('account:create', '--name', 'Other');
      const { webhook } = await withDatabaseAt(databaseUrl, (db) =>
        createWebhook(db, { accountId: other.id, url: 'http://127.0.0.1:9/hook' }, { allowInsecure: true, now: () => new Date() }),
      );
      const bad = file('hook.json', [{ id: 'h', type: 'webhook', endpointId: webhook.id }]);
      before = await stored();
      const stderr = await refused('sequence:create', '--account', accountId, '--name', 'S', '--steps', bad);
      expect(stderr).to.contain(`error: ${bad}: steps.0.endpointId: Step "h": "${webhook.id}" is not a webhook endpoint of the account`);
      // The endpoint's own account may use it.
      const sequence = await ok('sequence:create', '--account', other.id, '--name', 'Theirs', '--steps', bad);
      expect(sequence.steps).to.deep.equal([{ id: 'h', type: 'webhook', endpointId: webhook.id }]);
      before = { sequences: before.sequences + 1, versions: before.versions + 1 };
    });
  });
});
