import { createPrismaClient } from '@booking/db';
import { isBackendUnavailable } from '../src/http/backend-unavailable';
import { refuseStatementPastDeadline } from '../src/http/request-deadline';

// The last line of the request deadline: once a request's client was told 503, no statement of
// its handler reaches PostgreSQL, inside a transaction or not, so its work cannot commit later.
describe('statements of a request past its deadline', () => {
  let refuse: (statement: string) => boolean = () => false;
  // Outside a request there is no deadline; the test stands in for one that has passed.
  const pastDeadline = () => Object.assign(new Error('the request deadline has passed'), { code: '57014' });
  const db = createPrismaClient(process.env.DATABASE_URL!, {
    // One connection: the refused transaction's connection is the one the next caller gets.
    poolSize: 1,
    refuseStatement: (statement) => (refuse(statement) ? pastDeadline() : undefined),
  });

  afterAll(() => db.$disconnect());

  it('when the deadline has passed, then a statement is refused unsent, as a 503, and the pool stays usable', async () => {
    refuse = () => true;
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
    refuse = () => false;

    expect(single).not.toBeNull();
    expect(isBackendUnavailable(single)).toBe(true);
    expect(inTransaction).not.toBeNull();
    expect(isBackendUnavailable(inTransaction)).toBe(true);
    expect(await db.$queryRaw<{ one: number }[]>`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    const [row] = await db.$queryRaw<{ intx: boolean }[]>`SELECT now() <> statement_timestamp() AS intx`;
    expect(row!.intx).toBe(false);
  });

  it('when the deadline passes before a transaction commits, then nothing of it commits and its connection is left clean', async () => {
    const marker = `deadline-${Date.now()}`;
    await db.$executeRawUnsafe('CREATE TEMP TABLE IF NOT EXISTS deadline_probe (v text)');
    refuse = (statement) => /^\s*COMMIT\b/i.test(statement);
    const failed = await db
      .$transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO deadline_probe VALUES (${marker})`;
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    refuse = () => false;
    // The pool's one connection is outside any transaction, and someone else's transaction on it
    // commits nothing of the refused one.
    await db.$transaction(async (tx) => tx.$executeRaw`SELECT 1`);
    const [row] = await db.$queryRaw<{ intx: boolean }[]>`SELECT now() <> statement_timestamp() AS intx`;

    expect(isBackendUnavailable(failed)).toBe(true);
    expect(row!.intx).toBe(false);
    expect(await db.$queryRaw`SELECT v FROM deadline_probe WHERE v = ${marker}`).toEqual([]);
  });

  it('when no request is running, then nothing is refused', () => {
    expect(refuseStatementPastDeadline()).toBeUndefined();
  });
});
