import type pg from 'pg';
import { groupCalls } from './group-calls';

/** A delivery whose job stepped aside, and when it is due again. */
export interface PutOffDelivery {
  deliveryId: string;
  dueAt: Date;
}

export interface PutOffWriter {
  /** Writes the delivery's next_attempt_at; resolves once committed. */
  write(delivery: PutOffDelivery): Promise<void>;
  close(): Promise<void>;
}

// Only a delivery that was due: a run of its job that lost its lock to another worker, which has
// since scheduled a retry further off, leaves that retry's time alone.
const PUT_OFF: pg.QueryConfig = {
  name: 'dispatcher-put-off',
  text: `UPDATE webhook_deliveries d SET next_attempt_at = i.due_at, updated_at = now()
           FROM unnest($1::uuid[], $2::timestamptz[]) AS i(id, due_at)
          WHERE d.id = i.id AND d.status = 'pending' AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= now())`,
};

/**
 * Writes when stepped-aside deliveries are due again, the writes of concurrent jobs grouped into
 * one statement (at most 100, gathered while another runs, for at most 10 ms), as the reads are:
 * a slow endpoint's backlog steps aside many jobs at once.
 */
export function createPutOffWriter(pool: pg.Pool): PutOffWriter {
  const grouped = groupCalls<PutOffDelivery, void>(
    async (deliveries) => {
      await pool.query({
        ...PUT_OFF,
        values: [deliveries.map((d) => d.deliveryId), deliveries.map((d) => d.dueAt)],
      });
      return deliveries.map(() => undefined);
    },
    // One delivery twice in a group would make the UPDATE's outcome depend on the join order.
    { maxGroup: 100, maxWaitMs: 10, clash: (a, b) => a.deliveryId === b.deliveryId },
  );
  return { write: (delivery) => grouped.call(delivery), close: () => grouped.close() };
}
