import { randomUUID } from 'node:crypto';
import type { Checkout } from './checkout';
import { CAPACITY } from './env';

/** What the hold and booking requests name: one published experience and its venue. */
export interface Target {
  tenantId: string;
  venueId: string;
  experienceId: string;
  /**
   * GET path of the widget page of the tenant's other experience, whose slots are only the
   * seeded ones: a read whose cost does not grow with the slots the scenarios make.
   */
  widgetPath: string;
  /** Makes `count` fresh future slots of the experience (capacity CAPACITY) and returns their ids. */
  makeSlots(count: number): Promise<string[]>;
  close(): Promise<void>;
}

/** A checkout's bench database, and the catalogue seeded in it. */
export interface Catalogue {
  checkout: Checkout;
  databaseUrl: string;
  target: Target;
}

/**
 * Migrates the database (creating it if needed) with the checkout's own migrations and seeds a new
 * demo tenant. Slots are new on every run, so nothing an earlier run left in Redis counts.
 */
export async function prepareCatalogue(checkout: Checkout, databaseUrl: string): Promise<Target> {
  await checkout.db.applyMigrations(databaseUrl);
  const db = checkout.db.createPrismaClient(databaseUrl, { poolSize: 2 });
  const demo = await checkout.db.seedDemoTenant(db, { name: `Bench ${new Date().toISOString()}` });
  const experience = demo.experiences[0]!; // party 1..12
  const base = Date.now() + 3 * 24 * 3600 * 1000;
  let made = 0;
  return {
    tenantId: demo.tenant.id,
    venueId: demo.venue_id,
    experienceId: experience.id,
    widgetPath: `/api/widget/experience?tenant=${demo.tenant.slug}&experience=${demo.experiences[1]!.slug}`,
    async makeSlots(count) {
      const rows = Array.from({ length: count }, () => {
        const startsAt = new Date(base + made++ * 3600 * 1000);
        return {
          id: randomUUID(),
          tenantId: demo.tenant.id,
          experienceId: experience.id,
          startsAt,
          endsAt: new Date(startsAt.getTime() + 2 * 3600 * 1000),
          capacity: CAPACITY,
        };
      });
      await db.slot.createMany({ data: rows });
      return rows.map((row) => row.id);
    },
    close: () => db.$disconnect(),
  };
}
