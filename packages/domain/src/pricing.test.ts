import { priceBooking } from './pricing';
import { seatsRemaining } from './capacity';

describe('priceBooking', () => {
  it('when the slot has no price, then the base price applies per guest', () => {
    expect(priceBooking({ basePriceCents: 4500, slotPriceCents: null, guestCount: 3, addons: [] })).toEqual({
      unitPriceCents: 4500,
      addonsTotalCents: 0,
      totalCents: 13500,
    });
  });

  it('when the slot overrides the price and addons are bought, then both count', () => {
    const priced = priceBooking({
      basePriceCents: 4500,
      slotPriceCents: 6000,
      guestCount: 2,
      addons: [
        { addonId: 'a', qty: 2, unitPriceCents: 800 },
        { addonId: 'b', qty: 1, unitPriceCents: 1500 },
      ],
    });
    expect(priced).toEqual({ unitPriceCents: 6000, addonsTotalCents: 3100, totalCents: 15100 });
  });

  it('when the slot price override is zero, then the booking is free rather than base-priced', () => {
    expect(priceBooking({ basePriceCents: 4500, slotPriceCents: 0, guestCount: 2, addons: [] }).totalCents).toBe(0);
  });
});

describe('seatsRemaining', () => {
  it('when bookings and holds are counted, then the rest is sellable and never negative', () => {
    expect(seatsRemaining({ capacity: 20, seatsBooked: 5 }, 3)).toBe(12);
    expect(seatsRemaining({ capacity: 20, seatsBooked: 15 }, 9)).toBe(0);
  });
});
