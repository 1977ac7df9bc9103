import { endsOf, lateReason } from './late-money';

const at = (text: string) => new Date(text);
const requested = at('2026-05-10T12:00:00.250Z');
/** A renewal for the period that began on the 1st, paid after the request (a retry, a late collection). */
const currentPeriod = { periodStart: at('2026-05-01T00:00:00Z'), paidAt: at('2026-05-10T13:00:00Z') };
const nextPeriod = { periodStart: at('2026-06-01T00:00:00Z'), paidAt: at('2026-06-01T01:00:00Z') };
const row = (periodEndRequestedAt: Date | null, endRequestedAt: Date | null = requested) => ({
  endRequestedAt,
  periodEndRequestedAt,
  endedAt: null,
});

describe('money a membership cannot keep', () => {
  it('when the end asked for is at period end, then a payment for the period begun before the request is kept, whenever it is paid; one for a later period is not', () => {
    const ends = endsOf(row(requested));
    expect(ends.atPeriodEnd).toBe(true);
    expect(lateReason(ends, currentPeriod)).toBeNull();
    expect(lateReason(ends, nextPeriod)).toBe('paid_after_end_requested');
    expect(lateReason(ends, { periodStart: requested, paidAt: requested })).toBe('paid_after_end_requested');
  });

  it('when the end asked for is now, then any payment made from the request on is given back, whatever period it is for', () => {
    const ends = endsOf(row(null));
    expect(ends.atPeriodEnd).toBe(false);
    expect(lateReason(ends, currentPeriod)).toBe('paid_after_end_requested');
    expect(lateReason(ends, { ...currentPeriod, paidAt: at('2026-05-10T11:59:59Z') })).toBeNull();
  });

  it('when a later request took the period-end one over (staff ending it now on a pod of the previous release, which writes no kind), then it is judged as an end now', () => {
    const takenOver = endsOf(row(requested, at('2026-05-10T12:30:00Z')));
    expect(takenOver.atPeriodEnd).toBe(false);
    expect(lateReason(takenOver, { ...currentPeriod, paidAt: at('2026-05-10T12:45:00Z') })).toBe(
      'paid_after_end_requested',
    );
  });

  it('when the provider has ended the subscription, then a payment after the end is given back even for a period-end request', () => {
    const ends = endsOf(row(requested), at('2026-05-10T13:00:00Z'));
    expect(lateReason(ends, { ...currentPeriod, paidAt: at('2026-05-10T13:00:01Z') })).toBe('paid_after_ended');
    expect(lateReason(ends, currentPeriod)).toBeNull();
  });
});
