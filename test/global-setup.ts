// The migration runner alone, not the package index: Jest runs this file through ts-node, which
// cannot load the generated Prisma client the index brings in (its imports end in `.js`).
import { applyMigrations } from '@booking/db/src/migrations/apply-migrations';

export default async function globalSetup(): Promise<void> {
  await applyMigrations(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/booking_test');
}
