export interface PricedAddon {
  addonId: string;
  qty: number;
  unitPriceCents: number;
}

export interface PricedBooking {
  unitPriceCents: number;
  addonsTotalCents: number;
  totalCents: number;
}

/** Price = (slot price, or the experience's base price when the slot has none) x guests + addons. */
export function priceBooking(input: {
  basePriceCents: number;
  slotPriceCents: number | null;
  guestCount: number;
  addons: PricedAddon[];
}): PricedBooking {
  const unitPriceCents = input.slotPriceCents ?? input.basePriceCents;
  const addonsTotalCents = input.addons.reduce((sum, addon) => sum + addon.qty * addon.unitPriceCents, 0);
  return { unitPriceCents, addonsTotalCents, totalCents: unitPriceCents * input.guestCount + addonsTotalCents };
}
