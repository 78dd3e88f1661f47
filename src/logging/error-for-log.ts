// pino's `err` serializer. pino's own copies every enumerable field of an error, and database
// errors carry the data they failed on: Sequelize's `sql` and `parameters` (values inlined),
// a unique-constraint error's `fields` and `errors[].value` (a contact's email), a model
// `instance`. So only the fields below are kept, and a database error's message is cut at its
// first quote (MySQL quotes the offending value: "Duplicate entry 'ada@example.com' for key").

const KEPT = ['code', 'errno', 'sqlState', 'syscall'] as const;
const NESTED = ['cause', 'parent'] as const;
const MAX_DEPTH = 4;

export interface LoggedError {
  type: string;
  message: string;
  stack?: string;
  [field: string]: unknown;
}

export function errorForLog(value: unknown): unknown {
  return value instanceof Error ? shape(value, 0) : value;
}

function shape(error: Error, depth: number): LoggedError {
  const fields = error as unknown as Record<string, unknown>;
  const message = isDatabaseError(fields) ? beforeFirstQuote(error.message) : error.message;
  const logged: LoggedError = {
    type: error.constructor?.name ?? error.name,
    message,
    stack: error.stack?.replace(error.message, message),
  };
  for (const key of KEPT) {
    if (fields[key] !== undefined) logged[key] = fields[key];
  }
  if (depth >= MAX_DEPTH) return logged;
  for (const key of NESTED) {
    const nested = fields[key];
    if (nested instanceof Error && nested !== error) logged[key] = shape(nested, depth + 1);
  }
  // Node reports a refused connection to every address of a host as one AggregateError.
  if (error instanceof AggregateError) {
    logged.errors = error.errors.filter((e): e is Error => e instanceof Error).map((e) => shape(e, depth + 1));
  }
  return logged;
}

function isDatabaseError(fields: Record<string, unknown>): boolean {
  return 'sql' in fields || 'sqlMessage' in fields || /^Sequelize/.test(String(fields.name));
}

function beforeFirstQuote(message: string): string {
  const quote = message.search(/['"]/);
  return quote < 0 ? message : `${message.slice(0, quote).trimEnd()} [values hidden]`;
}
