// Tests use their own database so they never touch the one `pnpm start` serves.
process.env.DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/booking_test';
process.env.NODE_ENV = 'test';
process.env.LOG_LEVEL ??= 'silent';
