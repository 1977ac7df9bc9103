/** Failures of PostgreSQL or Redis reachability: the caller may retry, nothing is wrong with its request. */
export function isBackendUnavailable(error: unknown): boolean {
  const name = (error as { name?: string })?.name ?? '';
  const code = (error as { code?: string })?.code ?? '';
  return (
    name === 'PrismaClientInitializationError' ||
    name === 'MaxRetriesPerRequestError' ||
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'P1001', 'P1017', 'P2024', 'P2028'].includes(code) ||
    /Connection is closed|connect ECONNREFUSED/.test(String((error as Error)?.message))
  );
}
