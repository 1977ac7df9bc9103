import { Prisma, type Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { normaliseEmail } from '../customers/customer-email';
import { upsertBookingCustomer } from '../customers/upsert-booking-customer';
import { membershipRef } from '../memberships/membership-ref';
import type { Operator } from '../operators/api-key-auth';
import { termExpiry } from './membership-term';
import type { ImportRequest, ImportResponse, ImportRow, ImportRowResult } from './sale-schemas';

/**
 * Imports existing members from another system (admin), row by row, each in its own
 * transaction: a new external_ref becomes a membership (source import) with its customers (made
 * or refreshed by email; customer.created for new ones) and membership.imported; a reference
 * imported before is `skipped` and recorded nothing (so a file can be sent again, or two imports
 * of it can race: the unique (tenant, external_ref) lets one create it). A row that cannot be
 * imported is `failed` with its code, and the other rows carry on.
 *
 * Only fixed-term plans: a recurring membership is a Stripe subscription, which an import cannot
 * make (the member has to pay for it), so such rows fail with plan_invalid. A plan id that is
 * not the tenant's refuses the whole request (404 membership_plan_not_found): the file's plan
 * mapping is wrong, and no row is imported.
 */
export async function importMemberships(db: Db, operator: Operator, request: ImportRequest): Promise<ImportResponse> {
  const planIds = [...new Set(request.rows.map((row) => row.plan_id))];
  const plans = await db.membershipPlan.findMany({ where: { id: { in: planIds }, tenantId: operator.tenantId } });
  const unknown = planIds.filter((id) => !plans.some((plan) => plan.id === id));
  if (unknown.length > 0) throw new AppError('membership_plan_not_found', { plan_ids: unknown });
  const planOf = new Map(plans.map((plan) => [plan.id, plan]));

  const results: ImportRowResult[] = [];
  for (const row of request.rows) {
    results.push(await importRow(db, operator, row, planOf.get(row.plan_id)!));
  }
  const count = (outcome: ImportRowResult['outcome']) => results.filter((result) => result.outcome === outcome).length;
  return { created: count('created'), skipped: count('skipped'), failed: count('failed'), results };
}

type Plan = Prisma.MembershipPlanGetPayload<object>;

async function importRow(db: Db, operator: Operator, row: ImportRow, plan: Plan): Promise<ImportRowResult> {
  const ref = row.external_ref;
  const failed = (error: string, message: string): ImportRowResult => ({
    external_ref: ref,
    outcome: 'failed',
    membership_id: null,
    error,
    message,
  });
  if (plan.billing !== 'fixed_term') {
    return failed('plan_invalid', 'recurring memberships cannot be imported: they are bought online');
  }
  const startsAt = new Date(row.starts_at);
  const expiresAt = row.expires_at ? new Date(row.expires_at) : termExpiry(startsAt, plan);
  if (expiresAt <= startsAt) return failed('invalid_body', 'expires_at must be after starts_at');

  const skipped = (membershipId: string): ImportRowResult => ({
    external_ref: ref,
    outcome: 'skipped',
    membership_id: membershipId,
    error: null,
    message: null,
  });
  const before = await db.membership.findUnique({
    where: { tenantId_externalRef: { tenantId: operator.tenantId, externalRef: ref } },
    select: { id: true },
  });
  if (before) return skipped(before.id);

  try {
    const membershipId = await db.$transaction(async (tx) => {
      // In email order, like a purchase, so two imports (or an import and a purchase) naming the
      // same two people lock them in the same order. A holder with the owner's email is the owner.
      const ownerEmail = normaliseEmail(row.customer.email);
      const holderEmail = row.holder ? normaliseEmail(row.holder.email) : ownerEmail;
      const people = new Map([
        [holderEmail, row.holder ?? row.customer],
        [ownerEmail, row.customer],
      ]);
      const ids = new Map<string, string>();
      for (const [email, person] of [...people].sort(([a], [b]) => a.localeCompare(b))) {
        ids.set(
          email,
          await upsertBookingCustomer(
            tx,
            operator.tenantId,
            email,
            { firstName: person.first_name, lastName: person.last_name },
            'order',
          ),
        );
      }
      const customerId = ids.get(ownerEmail)!;
      const holderId = ids.get(holderEmail)!;
      const membership = await tx.membership.create({
        data: {
          tenantId: operator.tenantId,
          planId: plan.id,
          billing: plan.billing,
          source: 'import',
          externalRef: ref,
          customerId,
          holderCustomerId: holderId,
          status: row.status,
          startsAt,
          expiresAt,
          periodStart: startsAt,
          priceCents: plan.priceCents,
          currency: plan.currency,
        },
      });
      await recordEvent(tx, {
        tenantId: operator.tenantId,
        name: 'membership.imported',
        entityType: 'membership',
        entityId: membership.id,
        fields: {
          ...membershipRef(membership),
          external_ref: ref,
          billing: plan.billing,
          status: row.status,
          starts_at: startsAt.toISOString(),
          expires_at: expiresAt.toISOString(),
          actor_user_id: operator.keyId,
        },
      });
      return membership.id;
    });
    return { external_ref: ref, outcome: 'created', membership_id: membershipId, error: null, message: null };
  } catch (error) {
    // Imported by a concurrent request between the look-up and the insert.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
      const existing = await db.membership.findUnique({
        where: { tenantId_externalRef: { tenantId: operator.tenantId, externalRef: ref } },
        select: { id: true },
      });
      if (existing) return skipped(existing.id);
    }
    throw error;
  }
}
