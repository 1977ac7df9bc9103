import { AppError, type PricedAddon } from '@booking/domain';
import type { BookingRequest } from './booking-schemas';

/** An addon row as the booking's read finds it (by id, within the tenant). */
export interface FoundAddon {
  id: string;
  experienceId: string;
  active: boolean;
  priceCents: number;
}

type RequestedAddons = NonNullable<BookingRequest['addons']>;

/** Refuses an addon listed twice; checked before anything is read. */
export function refuseDuplicateAddons(requested: RequestedAddons): void {
  const ids = requested.map((item) => item.addon_id);
  const duplicates = ids.filter((id, index) => ids.indexOf(id) !== index);
  if (duplicates.length > 0)
    throw new AppError('addon_invalid', { addon_ids: [...new Set(duplicates)], reason: 'listed more than once' });
}

/**
 * Prices the requested addons from the tenant's addons `found` by their ids. An id this tenant
 * has never had is `addon_not_found`; one that exists but cannot go on this booking (another
 * experience's, or retired) is `addon_invalid`.
 */
export function priceAddons(experienceId: string, requested: RequestedAddons, found: FoundAddon[]): PricedAddon[] {
  const byId = new Map(found.map((addon) => [addon.id, addon]));
  const missing = requested.map((item) => item.addon_id).filter((id) => !byId.has(id));
  if (missing.length > 0) throw new AppError('addon_not_found', { addon_ids: missing });
  const unusable = found
    .filter((addon) => addon.experienceId !== experienceId || !addon.active)
    .map((addon) => addon.id);
  if (unusable.length > 0)
    throw new AppError('addon_invalid', { addon_ids: unusable, reason: 'not offered for this experience' });

  return requested.map((item) => ({
    addonId: item.addon_id,
    qty: item.qty,
    unitPriceCents: byId.get(item.addon_id)!.priceCents,
  }));
}
