import { allowancePeriodAt, isInPeriod, remainingAfter, visitPeriodAt, type AllowancePeriod } from './allowances';

const at = (text: string) => new Date(text);
const bounds = (period: AllowancePeriod) => [period.key, period.start?.toISOString(), period.end?.toISOString()];

const monthly = { allowancePeriod: 'term', interval: 'month', intervalCount: 1 } as const;
/** A recurring membership whose current billing period runs from `start` to `end`. */
const recurring = (start: string, end: string) => ({
  billing: 'recurring' as const,
  periodStart: at(start),
  startsAt: at('2026-01-31T09:00:00Z'),
  createdAt: at('2026-01-30T00:00:00Z'),
  expiresAt: at(end),
});

describe('the allowance period of a use', () => {
  it('when the plan counts by month, then the period is the calendar month (UTC) of the use, whatever the membership', () => {
    const plan = { ...monthly, allowancePeriod: 'month' } as const;
    const period = allowancePeriodAt(
      plan,
      recurring('2026-03-10T00:00:00Z', '2026-04-10T00:00:00Z'),
      at('2026-12-31T23:59:59.999Z'),
    );
    expect(bounds(period)).toEqual(['2026-12', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
  });

  it('when a recurring term plan counts a use in the current billing period, then the period is [period_start, expires_at)', () => {
    const membership = recurring('2026-03-31T09:00:00Z', '2026-04-30T09:00:00Z');
    expect(bounds(allowancePeriodAt(monthly, membership, at('2026-04-30T08:59:59Z')))).toEqual([
      'term-2026-03-31',
      '2026-03-31T09:00:00.000Z',
      '2026-04-30T09:00:00.000Z',
    ]);
  });

  it('when the visit is after the current period, then it counts in the period it will fall in, stepped by the interval from the current start as the provider counts (a month-end anchor stays at month end)', () => {
    const membership = recurring('2026-03-31T09:00:00Z', '2026-04-30T09:00:00Z');
    expect(bounds(allowancePeriodAt(monthly, membership, at('2026-04-30T09:00:00Z')))).toEqual([
      'term-2026-04-30',
      '2026-04-30T09:00:00.000Z',
      '2026-05-31T09:00:00.000Z',
    ]);
    expect(bounds(allowancePeriodAt(monthly, membership, at('2026-06-15T00:00:00Z')))).toEqual([
      'term-2026-05-31',
      '2026-05-31T09:00:00.000Z',
      '2026-06-30T09:00:00.000Z',
    ]);
    const yearly = { ...monthly, interval: 'year', intervalCount: 1 } as const;
    const year = recurring('2026-02-01T00:00:00Z', '2027-02-01T00:00:00Z');
    expect(bounds(allowancePeriodAt(yearly, year, at('2027-06-01T00:00:00Z')))[0]).toBe('term-2027-02-01');
  });

  it('when the billing anchor is the 31st and the current period starts on a shortened day (Feb 28), then the next periods end on the 31st or the month’s last day, not on the 28th', () => {
    const membership = recurring('2026-02-28T09:00:00Z', '2026-03-31T09:00:00Z');
    expect(bounds(allowancePeriodAt(monthly, membership, at('2026-04-15T00:00:00Z')))).toEqual([
      'term-2026-03-31',
      '2026-03-31T09:00:00.000Z',
      '2026-04-30T09:00:00.000Z',
    ]);
    expect(bounds(allowancePeriodAt(monthly, membership, at('2026-05-15T00:00:00Z')))).toEqual([
      'term-2026-04-30',
      '2026-04-30T09:00:00.000Z',
      '2026-05-31T09:00:00.000Z',
    ]);
    expect(bounds(allowancePeriodAt(monthly, membership, at('2026-02-01T00:00:00Z')))[1]).toBe(
      '2026-01-31T09:00:00.000Z',
    );
  });

  it('when the current period starts on Apr 30 and ends on May 31, then the next one ends on Jun 30 and the one after on Jul 31', () => {
    const membership = recurring('2026-04-30T09:00:00Z', '2026-05-31T09:00:00Z');
    expect(bounds(allowancePeriodAt(monthly, membership, at('2026-06-01T00:00:00Z')))).toEqual([
      'term-2026-05-31',
      '2026-05-31T09:00:00.000Z',
      '2026-06-30T09:00:00.000Z',
    ]);
    expect(bounds(allowancePeriodAt(monthly, membership, at('2026-07-01T00:00:00Z')))[2]).toBe(
      '2026-07-31T09:00:00.000Z',
    );
  });

  it('when the billing anchor is the 28th, then a period ending on Mar 28 is followed by one ending on Apr 28, not on the month’s end', () => {
    const membership = recurring('2026-02-28T09:00:00Z', '2026-03-28T09:00:00Z');
    expect(bounds(allowancePeriodAt(monthly, membership, at('2026-04-01T00:00:00Z')))).toEqual([
      'term-2026-03-28',
      '2026-03-28T09:00:00.000Z',
      '2026-04-28T09:00:00.000Z',
    ]);
  });

  it('when a freeze moved the current period (a new start, its end a month later), then later visits step from the new period, not the old one', () => {
    // Resumed on 12 May after a freeze from the 30 April renewal.
    const membership = recurring('2026-05-12T06:00:00Z', '2026-06-12T06:00:00Z');
    expect(bounds(allowancePeriodAt(monthly, membership, at('2026-06-20T00:00:00Z')))).toEqual([
      'term-2026-06-12',
      '2026-06-12T06:00:00.000Z',
      '2026-07-12T06:00:00.000Z',
    ]);
  });

  it('when the use is before the current period, then it counts in the period before it', () => {
    const membership = recurring('2026-03-31T09:00:00Z', '2026-04-30T09:00:00Z');
    expect(bounds(allowancePeriodAt(monthly, membership, at('2026-03-31T08:00:00Z')))).toEqual([
      'term-2026-02-28',
      '2026-02-28T09:00:00.000Z',
      '2026-03-31T09:00:00.000Z',
    ]);
  });

  it('when the membership is fixed-term, then its term is one period, open at both ends, so a freeze that moves its expiry keeps every use in it', () => {
    const term = { ...recurring('2026-01-31T09:00:00Z', '2027-01-31T09:00:00Z'), billing: 'fixed_term' as const };
    const period = allowancePeriodAt(
      { allowancePeriod: 'term', interval: null, intervalCount: 1 },
      term,
      at('2027-03-01T00:00:00Z'),
    );
    expect(bounds(period)).toEqual(['term-2026-01-31', undefined, undefined]);
    expect(isInPeriod(period, at('2030-01-01T00:00:00Z'))).toBe(true);
  });

  it('when a period is bounded, then it holds its start and not its end', () => {
    const period = allowancePeriodAt(
      monthly,
      recurring('2026-03-31T09:00:00Z', '2026-04-30T09:00:00Z'),
      at('2026-04-01T00:00:00Z'),
    );
    expect(isInPeriod(period, at('2026-03-31T09:00:00Z'))).toBe(true);
    expect(isInPeriod(period, at('2026-04-30T09:00:00Z'))).toBe(false);
    expect(isInPeriod(period, at('2026-03-31T08:59:59.999Z'))).toBe(false);
  });

  it('when a use would go beyond the cap, then it is 409 allowance_exhausted naming the period; an unlimited allowance has no remainder', () => {
    const period = { key: 'term-2026-04-30', start: null, end: null };
    expect(remainingAfter('visit', 4, 3, 1, period)).toBe(0);
    expect(remainingAfter('visit', null, 99, 1, period)).toBeNull();
    expect(() => remainingAfter('visit', 4, 4, 1, period)).toThrow(
      expect.objectContaining({
        code: 'allowance_exhausted',
        detail: { kind: 'visit', remaining: 0, period_key: 'term-2026-04-30' },
      }),
    );
  });
});

describe('how far ahead a visit may be booked', () => {
  const now = at('2026-03-10T12:00:00Z');
  const notOpen = (periodKey: string, opensAt: string) =>
    expect.objectContaining({
      code: 'allowance_exhausted',
      detail: { kind: 'visit', remaining: 0, period_key: periodKey, opens_at: opensAt },
    });

  it('when a recurring membership’s visit is in the current or the next billing period, then it counts there; one after the next is 409 allowance_exhausted saying when its period opens', () => {
    const membership = recurring('2026-02-28T09:00:00Z', '2026-03-31T09:00:00Z');
    expect(visitPeriodAt(monthly, membership, at('2026-03-31T08:59:59Z'), now).key).toBe('term-2026-02-28');
    expect(visitPeriodAt(monthly, membership, at('2026-04-30T08:59:59Z'), now).key).toBe('term-2026-03-31');
    expect(() => visitPeriodAt(monthly, membership, at('2026-04-30T09:00:00Z'), now)).toThrow(
      notOpen('term-2026-04-30', '2026-03-31T09:00:00.000Z'),
    );
    expect(() => visitPeriodAt(monthly, membership, at('2026-07-01T00:00:00Z'), now)).toThrow(
      notOpen('term-2026-06-30', '2026-05-31T09:00:00.000Z'),
    );
  });

  it('when the renewal is due but not recorded yet (now after expires_at), then only the period after the one paid for is open: one renewal ahead of what is paid', () => {
    const membership = recurring('2026-02-28T09:00:00Z', '2026-03-31T09:00:00Z');
    const late = at('2026-04-02T10:00:00Z');
    expect(visitPeriodAt(monthly, membership, at('2026-04-15T00:00:00Z'), late).key).toBe('term-2026-03-31');
    expect(() => visitPeriodAt(monthly, membership, at('2026-05-15T00:00:00Z'), late)).toThrow(
      notOpen('term-2026-04-30', '2026-03-31T09:00:00.000Z'),
    );
  });

  it('when the plan counts by calendar month, then this month and the next are open and the month after is not', () => {
    const plan = { ...monthly, allowancePeriod: 'month' } as const;
    const membership = recurring('2026-03-05T00:00:00Z', '2026-04-05T00:00:00Z');
    expect(visitPeriodAt(plan, membership, at('2026-04-30T23:59:59.999Z'), now).key).toBe('2026-04');
    expect(() => visitPeriodAt(plan, membership, at('2026-05-01T00:00:00Z'), now)).toThrow(
      notOpen('2026-05', '2026-04-01T00:00:00.000Z'),
    );
  });

  it('when the membership is fixed-term, then its one period has no later period to refuse (its end is the limit)', () => {
    const term = { ...recurring('2026-01-31T09:00:00Z', '2027-01-31T09:00:00Z'), billing: 'fixed_term' as const };
    const plan = { allowancePeriod: 'term', interval: null, intervalCount: 1 } as const;
    expect(visitPeriodAt(plan, term, at('2026-12-31T00:00:00Z'), now).key).toBe('term-2026-01-31');
  });
});
