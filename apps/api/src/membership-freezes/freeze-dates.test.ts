import { addDays, dayOf, formatDay, freezeDays, frozenDaysBy, parseDay } from './freeze-dates';

const d = (text: string) => parseDay(text)!;

describe('freeze days', () => {
  it('when a day is parsed, then only real calendar days are days', () => {
    expect(formatDay(d('2026-02-28'))).toBe('2026-02-28');
    expect(parseDay('2026-02-29')).toBeUndefined();
    expect(parseDay('2026-13-01')).toBeUndefined();
    expect(parseDay('26-01-01')).toBeUndefined();
    expect(formatDay(dayOf(new Date('2026-11-25T23:59:59.999Z')))).toBe('2026-11-25');
  });

  it('when a freeze is counted, then both ends are included', () => {
    expect(freezeDays(d('2026-12-01'), d('2026-12-01'))).toBe(1);
    expect(freezeDays(d('2026-12-25'), d('2027-01-07'))).toBe(14);
  });

  it('when a freeze ends, then the days frozen run from its first day to the day before it ends, at most all of them', () => {
    const freeze = { startsOn: d('2026-12-01'), endsOn: d('2026-12-10') };
    expect(frozenDaysBy(freeze, new Date('2026-12-01T15:00:00Z'))).toBe(0);
    expect(frozenDaysBy(freeze, new Date('2026-12-04T08:00:00Z'))).toBe(3);
    expect(frozenDaysBy(freeze, new Date('2026-12-11T00:05:00Z'))).toBe(10);
    expect(frozenDaysBy(freeze, addDays(new Date('2026-12-11T00:05:00Z'), 30))).toBe(10);
    expect(frozenDaysBy(freeze, new Date('2026-11-30T12:00:00Z'))).toBe(0);
  });
});
