import { expect } from 'chai';
import { ConnectionRefusedError, UniqueConstraintError, ValidationErrorItem } from 'sequelize';
import { ServiceUnavailableError } from '../../src/errors/app-errors';
import { bufferLogger } from '../support/log-buffer';

// The logger's err serializer: what an error says about itself in a line, and what it must not
// (the values a database error carries).

describe('errors in log lines', () => {
  it('keep type, message, stack, codes and the chain of causes', () => {
    const { logger, records } = bufferLogger('info');
    const refused = new ConnectionRefusedError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:3306'), { code: 'ECONNREFUSED', errno: -111, syscall: 'connect' }));
    logger.error({ err: new ServiceUnavailableError('Database unavailable; retry shortly', { cause: refused }) }, 'failed');
    const [{ err }] = records() as unknown as Array<{ err: Record<string, any> }>;
    expect(err).to.include({ type: 'ServiceUnavailableError', message: 'Database unavailable; retry shortly' });
    expect(err.stack).to.match(/^Error: Database unavailable; retry shortly\n\s+at /);
    expect(err.cause).to.include({ type: 'ConnectionRefusedError', message: 'connect ECONNREFUSED 10.0.0.1:3306' });
    expect(err.cause.parent).to.include({ code: 'ECONNREFUSED', errno: -111, syscall: 'connect' });
  });

  it('drop the fields and values a unique-constraint error carries, and hide quoted values in its messages', () => {
    const { logger, text } = bufferLogger('info');
    const parent = Object.assign(new Error("Duplicate entry 'acc-1-ada@example.com' for key 'contacts_account_email'"), {
      code: 'ER_DUP_ENTRY',
      errno: 1062,
      sql: "INSERT INTO contacts (email, phone) VALUES ('ada@example.com', '+447700900123')",
    });
    const error = new UniqueConstraintError({
      parent,
      fields: { email_normalized: 'ada@example.com' },
      errors: [new ValidationErrorItem('email must be unique', 'unique violation', 'email', 'ada@example.com', null as never, 'not_unique', 'unique', [])],
    } as unknown as ConstructorParameters<typeof UniqueConstraintError>[0]);
    logger.error({ err: error }, 'failed');
    expect(text()).to.not.include('ada@example.com');
    expect(text()).to.not.include('+447700900123');
    expect(text()).to.include('Duplicate entry [values hidden]');
    expect(text()).to.include('"code":"ER_DUP_ENTRY"');
  });

  it('list every address of a refused connection (AggregateError)', () => {
    const { logger, records } = bufferLogger('info');
    const error = new AggregateError([new Error('connect ECONNREFUSED ::1:6379'), new Error('connect ECONNREFUSED 127.0.0.1:6379')], '');
    logger.error({ err: error }, 'failed');
    const [{ err }] = records() as unknown as Array<{ err: { errors: Array<{ message: string }> } }>;
    expect(err.errors.map((e) => e.message)).to.deep.equal(['connect ECONNREFUSED ::1:6379', 'connect ECONNREFUSED 127.0.0.1:6379']);
  });

  it('redact a key or its hash passed in a field by mistake', () => {
    const { logger, text } = bufferLogger('info');
    logger.info({ key: 'svc_0123456789abcdef0123456789abcdef01234567', created: { keyHash: 'f'.repeat(64) }, headers: { 'x-api-key': 'svc_x' } }, 'oops');
    expect(text()).to.not.include('svc_0123');
    expect(text()).to.not.include('f'.repeat(64));
    expect(text()).to.not.include('svc_x');
    expect(text()).to.include('[redacted]');
  });
});
