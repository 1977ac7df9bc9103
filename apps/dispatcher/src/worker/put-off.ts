import type pg from 'pg';
import { groupCalls } from './group-calls';

/** A delivery whose job stepped aside, as its run read it, and when it is due again. */
export interface PutOffDelivery {
  deliveryId: string;
  /** The delivery's updated_at as the run read it. */
  readAt: Date;
  dueAt: Date;
}

export interface PutOffWriter {
  /** Writes the delivery's next_attempt_at; false when the delivery had changed (nothing written). */
  write(delivery: PutOffDelivery): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Only a delivery unchanged since its run read it: one another worker has sent since (it had the
 * job after this run lost its lock), or a redeliver has reset, keeps what that wrote. The rows are
 * locked in id order first, as the attempt recorder locks them, so the two never deadlock.
 */
export const PUT_OFF: pg.QueryConfig = {
  name: 'dispatcher-put-off',
  text: `
    WITH locked AS MATERIALIZED (
      SELECT id FROM webhook_deliveries WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE
    )
    UPDATE webhook_deliveries d SET next_attempt_at = i.due_at, updated_at = now()
      FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[]) AS i(id, read_at, due_at)
     WHERE d.id = i.id AND d.id IN (SELECT id FROM locked)
       AND d.status = 'pending' AND d.updated_at = i.read_at
    RETURNING d.id`,
};

/**
 * Writes when stepped-aside deliveries are due again, the writes of concurrent jobs grouped into
 * one statement (at most 100, gathered while another runs, for at most 10 ms), as the reads are:
 * a slow endpoint's backlog steps aside many jobs at once.
 */
export function createPutOffWriter(pool: pg.Pool): PutOffWriter {
  const grouped = groupCalls<PutOffDelivery, boolean>(
    async (deliveries) => {
      const { rows } = await pool.query<{ id: string }>({
        ...PUT_OFF,
        values: [deliveries.map((d) => d.deliveryId), deliveries.map((d) => d.readAt), deliveries.map((d) => d.dueAt)],
      });
      const written = new Set(rows.map((row) => row.id));
      return deliveries.map((d) => written.has(d.deliveryId));
    },
    // One delivery twice in a group would make the UPDATE's outcome depend on the join order.
    { maxGroup: 100, maxWaitMs: 10, clash: (a, b) => a.deliveryId === b.deliveryId },
  );
  return { write: (delivery) => grouped.call(delivery), close: () => grouped.close() };
}
