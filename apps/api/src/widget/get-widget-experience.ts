import type { Db } from '@booking/db';
import { AppError, seatsRemaining } from '@booking/domain';
import type { HoldStore } from '../holds/hold-store';
import type { WidgetExperienceResponse, WidgetQuery } from './widget-schemas';

const WINDOW_MS = 14 * 24 * 60 * 60 * 1000;

/**
 * An experience and its bookable slots for the next 14 days, for the anonymous widget. A slot is
 * listed only while it can still take the smallest allowed party.
 */
export async function getWidgetExperience(
  deps: { db: Db; holds: HoldStore },
  query: WidgetQuery,
): Promise<WidgetExperienceResponse> {
  const now = new Date();
  const experience = await deps.db.experience.findFirst({
    where: { slug: query.experience, published: true, tenant: { slug: query.tenant, published: true } },
    include: {
      slots: {
        where: { startsAt: { gt: now, lte: new Date(now.getTime() + WINDOW_MS) } },
        orderBy: { startsAt: 'asc' },
      },
    },
  });
  if (!experience) throw new AppError('experience_not_found');

  const held = await deps.holds.liveSeats(experience.slots.map((slot) => slot.id));
  const slots = experience.slots
    .map((slot) => ({
      id: slot.id,
      starts_at: slot.startsAt.toISOString(),
      ends_at: slot.endsAt.toISOString(),
      capacity: slot.capacity,
      seats_remaining: seatsRemaining(slot, held.get(slot.id) ?? 0),
      price_cents: slot.priceCents,
    }))
    .filter((slot) => slot.seats_remaining >= experience.minPartySize);

  return {
    experience: {
      id: experience.id,
      name: experience.name,
      slug: experience.slug,
      description: experience.description,
      currency: experience.currency,
      base_price_cents: experience.basePriceCents,
      min_party_size: experience.minPartySize,
      max_party_size: experience.maxPartySize,
      duration_minutes: experience.durationMinutes,
      requires_waiver: experience.requiresWaiver,
    },
    slots,
  };
}
