import type { Db } from '@booking/db';
import { AppError, type PricedAddon } from '@booking/domain';
import type { BookingRequest } from './booking-schemas';

/**
 * Prices the requested addons. An id this tenant has never had is `addon_not_found`; one that
 * exists but cannot go on this booking (another experience's, retired, or listed twice) is
 * `addon_invalid`.
 */
export async function resolveAddons(
  db: Db,
  scope: { tenantId: string; experienceId: string },
  requested: NonNullable<BookingRequest['addons']>,
): Promise<PricedAddon[]> {
  if (requested.length === 0) return [];
  const ids = requested.map((item) => item.addon_id);
  const duplicates = ids.filter((id, index) => ids.indexOf(id) !== index);
  if (duplicates.length > 0)
    throw new AppError('addon_invalid', { addon_ids: [...new Set(duplicates)], reason: 'listed more than once' });

  const found = await db.addon.findMany({ where: { id: { in: ids }, tenantId: scope.tenantId } });
  const byId = new Map(found.map((addon) => [addon.id, addon]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length > 0) throw new AppError('addon_not_found', { addon_ids: missing });
  const unusable = found
    .filter((addon) => addon.experienceId !== scope.experienceId || !addon.active)
    .map((addon) => addon.id);
  if (unusable.length > 0)
    throw new AppError('addon_invalid', { addon_ids: unusable, reason: 'not offered for this experience' });

  return requested.map((item) => ({
    addonId: item.addon_id,
    qty: item.qty,
    unitPriceCents: byId.get(item.addon_id)!.priceCents,
  }));
}
