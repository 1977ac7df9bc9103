import path from 'node:path';

/** This checkout's root: the ceilings and the load generator always run from here. */
export const ROOT = path.resolve(__dirname, '..', '..');
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The URL of database `name` on the DATABASE_URL server (default 127.0.0.1:5432, user postgres). */
export function databaseUrl(name: string): string {
  const url = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/booking');
  url.pathname = `/${name}`;
  return url.toString();
}

/** Capacity of every bench slot: no scenario is meant to run out of seats. */
export const CAPACITY = 1_000_000;
/** Rate limits high enough never to refuse, on the API and on the hold ceiling alike. */
export const NO_LIMIT_PER_MINUTE = 1_000_000_000;
/** The production hold lifetime: live holds pile up for the whole run. */
export const HOLD_TTL_SECONDS = 600;
