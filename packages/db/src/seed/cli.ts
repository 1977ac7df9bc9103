import { loadConfig } from '@booking/config';
import { createPrismaClient } from '../prisma-client';
import { seedDemoTenant } from './demo-tenant';

/**
 * `seed --json`: a new demo tenant, printed as one JSON document on stdout (keys included:
 * this is how a developer gets them).
 * `seed --if-empty`: what `pnpm start` runs; seeds only a database without tenants and prints
 * no secrets, since start-up output ends up in logs.
 */
async function main() {
  const args = new Set(process.argv.slice(2));
  const config = loadConfig();
  const db = createPrismaClient(config.databaseUrl, { poolSize: 2 });
  try {
    if (args.has('--if-empty')) {
      if (!config.seedDemoTenant || (await db.tenant.count()) > 0) return;
      const demo = await seedDemoTenant(db);
      console.log(
        `seeded demo tenant "${demo.tenant.slug}" with experiences ${demo.experiences.map((e) => e.slug).join(', ')}; ` +
          'run `pnpm --silent seed --json` for a tenant with API keys and gift card codes',
      );
      return;
    }
    const demo = await seedDemoTenant(db);
    process.stdout.write(args.has('--json') ? `${JSON.stringify(demo)}\n` : `${JSON.stringify(demo, null, 2)}\n`);
  } finally {
    await db.$disconnect();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
