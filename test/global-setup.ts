import { applyMigrations } from '../packages/db/src/migrations/apply-migrations';

export default async function globalSetup(): Promise<void> {
  await applyMigrations(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/booking_test');
}
