import { AppError } from '@booking/domain';
import { isBackendUnavailable } from './backend-unavailable';

/** A Prisma error wrapping a PostgreSQL error, as the pg driver adapter reports it. */
const prismaWrapping = (code: string, sqlState: string) =>
  Object.assign(new Error('Database error'), {
    name: 'PrismaClientKnownRequestError',
    code,
    meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { originalCode: sqlState } } },
  });

describe('isBackendUnavailable', () => {
  it.each([
    ['pg: no answer within query_timeout', new Error('Query read timeout')],
    ['pg-pool: no free connection in time', new Error('timeout exceeded when trying to connect')],
    ['pg-pool: no new connection in time', new Error('Connection terminated due to connection timeout')],
    ['pg: connection dropped', new Error('Connection terminated unexpectedly')],
    ['pg: connection closed after a timeout', new Error('Client was closed and is not queryable')],
    ['ioredis: no answer within commandTimeout', new Error('Command timed out')],
    [
      'ioredis: Redis refusing',
      Object.assign(new Error('Reached the max retries'), { name: 'MaxRetriesPerRequestError' }),
    ],
    ['ioredis: socket error', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })],
    ['BullMQ: connection closed', Object.assign(new Error('Connection is closed.'), { name: 'ConnectionClosedError' })],
    [
      'Prisma: transaction timed out or could not begin',
      Object.assign(new Error('Transaction API error'), { code: 'P2028' }),
    ],
    ['Prisma: database not reachable', Object.assign(new Error('Cannot reach'), { code: 'P1001' })],
    ['PostgreSQL: statement_timeout', prismaWrapping('P2039', '57014')],
    ['PostgreSQL: idle_in_transaction_session_timeout', prismaWrapping('P2039', '25P03')],
    ['PostgreSQL: shutting down', prismaWrapping('P2010', '57P01')],
    ['PostgreSQL: connection failure', Object.assign(new Error('terminated'), { code: '08006' })],
  ])('when %s, then it is', (_case, error) => {
    expect(isBackendUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', prismaWrapping('P2002', '23505')],
    ['a serialization failure', prismaWrapping('P2034', '40001')],
    ['a programming error', new TypeError('x is undefined')],
    ['an AppError', new AppError('hold_not_found')],
    ['not an error', 'Command timed out'],
    ['nothing', undefined],
  ])('when %s, then it is not', (_case, error) => {
    expect(isBackendUnavailable(error)).toBe(false);
  });
});
