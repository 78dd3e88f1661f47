import { testDb } from './db';

type Query = ReturnType<typeof testDb>['sequelize']['query'];

function sqlText(sql: unknown): string {
  return typeof sql === 'string' ? sql : ((sql as { query?: string })?.query ?? '');
}

// Stops the first statement matching `pattern` once the database has answered it, until
// release(): its transaction is held open with its locks, so a test can line another
// transaction up behind it and choose the order in which they meet. `sent(other)` resolves
// when a statement matching `other` has been sent. restore() puts the database back.
export function holdAfter(pattern: RegExp) {
  const { sequelize } = testDb();
  const original = sequelize.query;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let markHeld!: () => void;
  const held = new Promise<void>((resolve) => (markHeld = resolve));
  const watchers: Array<{ pattern: RegExp; resolve: () => void }> = [];
  let holding = false;

  sequelize.query = function (this: typeof sequelize, ...args: Parameters<Query>) {
    const text = sqlText(args[0]);
    watchers.filter((watcher) => watcher.pattern.test(text)).forEach((watcher) => watcher.resolve());
    const result = original.apply(this, args);
    if (holding || !pattern.test(text)) return result;
    holding = true;
    return result.then(async (value) => {
      markHeld();
      await released;
      return value;
    });
  } as Query;

  return {
    held,
    release,
    sent: (other: RegExp) => new Promise<void>((resolve) => watchers.push({ pattern: other, resolve })),
    restore: () => {
      release();
      sequelize.query = original;
    },
  };
}
