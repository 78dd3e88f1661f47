import fs from 'node:fs';
import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/db/database';
import { MIGRATIONS_DIR, migrateToLatest } from '../../src/db/migrator';
import { select } from '../../src/db/sql/statements';
import { dropAllTables, rebindModelsToTestDb, schemaTables, TEST_DATABASE_URL, testDb } from '../support/db';
import { api } from '../support/app';
import { buildTenant } from '../support/factories';

// Several instances starting at once on one MySQL database take turns on the migrations
// (a named lock): one applies them, the others find nothing to do, and none fails.
//
// The svc user may only use the test database, so the "fresh database" is the test database
// emptied here; the schema is rebuilt afterwards whatever happens, for the suites that follow.

const LEDGERS = ['SequelizeMeta', 'sequelize_meta'];
const dropSchema = dropAllTables;

async function tablesNamed(db: Database, names: string[]): Promise<string[]> {
  const rows = await select<{ name: string }>(
    db,
    'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (?)',
    [names],
  );
  return rows.map((row) => row.name).sort();
}

describe('migrateToLatest on MySQL', function () {
  this.timeout(120_000);

  beforeEach(function () {
    if (testDb().dialect !== 'mysql') {
      this.currentTest!.title += ' (skipped: MySQL only; SQLite has one process starting it, TEST_DATABASE_URL picks MariaDB)';
      this.skip();
    }
  });

  it('applies the migrations once when three instances start together on a fresh database', async () => {
    const expected = fs.readdirSync(MIGRATIONS_DIR).filter((file) => file.endsWith('.js')).sort();
    expect(expected).to.not.be.empty;
    const handles = [0, 1, 2].map(() => openDatabase(TEST_DATABASE_URL));
    let schemaComplete = false;
    try {
      const schema = (await schemaTables(testDb())).sort();
      expect(schema).to.include.members(['accounts', 'contacts', 'sequence_runs']);
      await dropSchema(testDb());
      expect(await tablesNamed(testDb(), [...schema, ...LEDGERS])).to.deep.equal([]);

      const outcomes = await Promise.allSettled(handles.map((db) => migrateToLatest(db)));
      const failures = outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
      expect(failures).to.deep.equal([]);
      const applied = outcomes.map((o) => (o as PromiseFulfilledResult<string[]>).value);
      expect(applied.filter((names) => names.length > 0)).to.deep.equal([expected]);
      expect(applied.filter((names) => names.length === 0)).to.have.length(2);

      expect(await tablesNamed(testDb(), [...schema, 'SequelizeMeta'])).to.deep.equal([...schema, 'SequelizeMeta'].sort());
      const ledger = await select<{ name: string }>(testDb(), 'SELECT name FROM SequelizeMeta ORDER BY name', []);
      expect(ledger.map((row) => row.name)).to.deep.equal(expected);
      // A fourth start finds nothing to do.
      expect(await migrateToLatest(testDb())).to.deep.equal([]);
      schemaComplete = true;
    } finally {
      await Promise.all(handles.map((db) => db.close()));
      // Opening those handles bound the models to them: back to the test database, and back
      // to a complete schema should the race have left a partial one.
      rebindModelsToTestDb();
      if (!schemaComplete) {
        await dropSchema(testDb());
        await migrateToLatest(testDb());
      }
    }
  });

  it('leaves the test database serving the app afterwards', async () => {
    const { key } = await buildTenant();
    const res = await api(key).post('/contacts').send({ email: 'after-migrations@example.com' });
    expect(res.status, res.text).to.equal(201);
  });
});
