import { defineConfig } from 'prisma/config';

// Prisma 7 reads the connection URL from here, not from schema.prisma. It is only needed by
// `prisma migrate deploy` on machines that have Prisma's native schema engine; the service itself
// applies migrations with packages/db/src/migrations (same _prisma_migrations bookkeeping).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/booking' },
});
