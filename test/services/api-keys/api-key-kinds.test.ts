import { expect } from 'chai';
import { select } from '../../../src/db/sql/statements';
import type { ApiKeyKind } from '../../../src/schemas/statuses';
import { authenticateApiKey, createApiKey, listApiKeys } from '../../../src/services/api-keys';
import { testDb } from '../../support/db';
import { buildAccount, buildApiKey } from '../../support/factories';

// API key kinds (issue 7): integration (the default) and runner, as the service stores and
// authenticates them, and as the database itself holds them.

async function storedKind(id: string): Promise<string> {
  const [row] = await select<{ kind: string }>(testDb(), 'SELECT kind FROM api_keys WHERE id = ?', [id]);
  return row.kind;
}

async function keyCount(): Promise<number> {
  const [{ n }] = await select<{ n: number | string }>(testDb(), 'SELECT COUNT(*) AS n FROM api_keys', []);
  return Number(n);
}

describe('API key kinds', () => {
  it('makes an integration key unless told otherwise', async () => {
    const account = await buildAccount();
    const created = await createApiKey(testDb(), { accountId: account.id, name: 'shop' });
    expect(created.kind).to.equal('integration');
    expect(await storedKind(created.id)).to.equal('integration');
  });

  it('makes a runner key when asked, and authentication reports the kind', async () => {
    const account = await buildAccount();
    const runner = await createApiKey(testDb(), { accountId: account.id, name: 'runner', kind: 'runner' });
    const integration = await createApiKey(testDb(), { accountId: account.id, name: 'shop', kind: 'integration' });
    expect(runner.kind).to.equal('runner');
    expect(await storedKind(runner.id)).to.equal('runner');

    expect(await authenticateApiKey(testDb(), runner.key)).to.deep.equal({
      ok: true,
      key: { keyId: runner.id, accountId: account.id, kind: 'runner' },
    });
    expect(await authenticateApiKey(testDb(), integration.key)).to.deep.equal({
      ok: true,
      key: { keyId: integration.id, accountId: account.id, kind: 'integration' },
    });
  });

  it('lists every key with its kind', async () => {
    const account = await buildAccount();
    const shop = await buildApiKey(account.id, { name: 'shop' });
    const runner = await buildApiKey(account.id, { name: 'runner', kind: 'runner' });
    const listed = await listApiKeys(testDb(), { accountId: account.id });
    expect(listed.map((key) => [key.id, key.kind])).to.have.deep.members([
      [shop.id, 'integration'],
      [runner.id, 'runner'],
    ]);
  });

  it('refuses another kind and writes nothing', async () => {
    const account = await buildAccount();
    let caught: unknown;
    try {
      await createApiKey(testDb(), { accountId: account.id, name: 'admin', kind: 'admin' as ApiKeyKind });
    } catch (error) {
      caught = error;
    }
    expect(caught, 'createApiKey rejected').to.be.instanceOf(Error);
    expect(await keyCount()).to.equal(0);
  });

  describe('in the database', () => {
    // Written around the model, as a hand-run statement or another tool would.
    async function setKind(id: string, kind: string | null): Promise<'stored' | 'refused'> {
      try {
        await testDb().sequelize.query('UPDATE api_keys SET kind = ? WHERE id = ?', { replacements: [kind, id] });
        return 'stored';
      } catch {
        return 'refused';
      }
    }

    it('holds only integration or runner, exactly as spelt', async () => {
      const account = await buildAccount();
      const { id } = await buildApiKey(account.id);
      for (const kind of ['admin', 'RUNNER', 'Integration', 'runner ', ' runner', '', null]) {
        expect(await setKind(id, kind), JSON.stringify(kind)).to.equal('refused');
        expect(await storedKind(id)).to.equal('integration');
      }
      expect(await setKind(id, 'runner')).to.equal('stored');
      expect(await storedKind(id)).to.equal('runner');
      expect(await setKind(id, 'integration')).to.equal('stored');
    });

    it('gives a key inserted without a kind the integration kind', async () => {
      const account = await buildAccount();
      const now = new Date();
      await testDb().sequelize.query(
        `INSERT INTO api_keys (id, account_id, name, key_hash, key_prefix, active, created_at, updated_at)
         VALUES ('00000000-0000-4000-8000-00000000000a', ?, 'seeded', ?, 'svc_0000', 1, ?, ?)`,
        { replacements: [account.id, 'a'.repeat(64), now, now] },
      );
      expect(await storedKind('00000000-0000-4000-8000-00000000000a')).to.equal('integration');
    });
  });
});
