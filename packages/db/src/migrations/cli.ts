import { loadConfig } from '@booking/config';
import { applyMigrations } from './apply-migrations';

async function main() {
  const config = loadConfig();
  const applied = await applyMigrations(config.databaseUrl, { log: (line) => console.log(line) });
  console.log(applied.length === 0 ? 'database is up to date' : `applied ${applied.length} migration(s)`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
