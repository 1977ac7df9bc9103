import { createPrismaClient } from '@booking/db';
import { isBackendUnavailable } from '../src/http/backend-unavailable';
import { refuseStatementPastDeadline } from '../src/http/request-deadline';

// The last line of the request deadline: once a request's client was told 503, no statement of
// its handler reaches PostgreSQL, inside a transaction or not, so its work cannot commit later.
describe('statements of a request past its deadline', () => {
  let refuse = false;
  const db = createPrismaClient(process.env.DATABASE_URL!, {
    poolSize: 2,
    refuseStatement: () => (refuse ? (refuseStatementPastDeadline() ?? pastDeadline()) : undefined),
  });
  // Outside a request there is no deadline; the test stands in for one that has passed.
  const pastDeadline = () => Object.assign(new Error('the request deadline has passed'), { code: '57014' });

  afterAll(() => db.$disconnect());

  it('when the deadline has passed, then a statement is refused unsent, as a 503, and the pool stays usable', async () => {
    refuse = true;
    const single = await db.$queryRaw`SELECT 1`.then(
      () => null,
      (error: unknown) => error,
    );
    const inTransaction = await db
      .$transaction(async (tx) => tx.$queryRaw`SELECT 1`)
      .then(
        () => null,
        (error: unknown) => error,
      );
    refuse = false;

    expect(single).not.toBeNull();
    expect(isBackendUnavailable(single)).toBe(true);
    expect(inTransaction).not.toBeNull();
    expect(isBackendUnavailable(inTransaction)).toBe(true);
    expect(await db.$queryRaw<{ one: number }[]>`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    const [open] = await db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND state = 'idle in transaction' AND pid <> pg_backend_pid()
        AND application_name = ''`;
    expect(open!.n).toBe(0);
  });

  it('when no request is running, then nothing is refused', () => {
    expect(refuseStatementPastDeadline()).toBeUndefined();
  });
});
