import type { MembershipFreeze } from '@booking/db';
import { formatDay } from './freeze-dates';

const iso = (at: Date | null) => at && at.toISOString();

/** A freeze as the API shows it (MembershipFreeze in the document, as in a membership's view). */
export function freezeView(f: MembershipFreeze) {
  return {
    freeze_id: f.id,
    starts_on: formatDay(f.startsOn),
    ends_on: formatDay(f.endsOn),
    status: f.status,
    frozen_days: f.frozenDays,
    fee_cents: f.feeCents,
    requested_by: f.requestedBy,
    reason: f.reason,
    created_at: f.createdAt.toISOString(),
    started_at: iso(f.startedAt),
    ended_at: iso(f.endedAt),
  };
}
