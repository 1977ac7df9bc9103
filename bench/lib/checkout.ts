import { realpathSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './env';

type DbModule = typeof import('@booking/db');
type EventsModule = typeof import('@booking/events');
type SigningModule = typeof import('@booking/signing');

/**
 * A checkout whose apps the bench runs: this one ("after"), or the one BENCH_BEFORE_ROOT names
 * ("before"). Its API and dispatcher are spawned from its own root, and its databases are
 * migrated, seeded and written (outbox events) with its own packages, so a schema change between
 * the two never meets the other's client.
 */
export interface Checkout {
  label: 'after' | 'before';
  root: string;
  db: DbModule;
  events: EventsModule;
  signing: SigningModule;
}

async function load<T>(root: string, pkg: string): Promise<T> {
  return (await import(path.join(root, 'packages', pkg, 'src', 'index.ts'))) as T;
}

export async function loadCheckout(label: Checkout['label'], root: string): Promise<Checkout> {
  return {
    label,
    root,
    db: await load<DbModule>(root, 'db'),
    events: await load<EventsModule>(root, 'events'),
    signing: await load<SigningModule>(root, 'signing'),
  };
}

/** This checkout, then the BENCH_BEFORE_ROOT one if set. */
export async function checkouts(): Promise<Checkout[]> {
  const list = [await loadCheckout('after', ROOT)];
  const before = process.env.BENCH_BEFORE_ROOT;
  if (before) {
    // The two checkouts' processes are told apart by the root they run from (see cpu.ts).
    if (realpathSync(before) === realpathSync(ROOT))
      throw new Error('BENCH_BEFORE_ROOT is this checkout: give it a worktree of the commit to compare with');
    list.push(await loadCheckout('before', path.resolve(before)));
  }
  return list;
}

/** A database name of the bench, kept apart per checkout. */
export function benchDatabase(checkout: Checkout, name: string): string {
  return checkout.label === 'after' ? name : `${name}_before`;
}
