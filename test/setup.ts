import { closeTestDb, openTestDb, resetTestDb } from './support/db';

// Mocha root hooks: one database for the run, emptied before each test.
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    await openTestDb();
  },
  async beforeEach() {
    await resetTestDb();
  },
  async afterAll() {
    await closeTestDb();
  },
};
