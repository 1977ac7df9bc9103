import { GROUPS, runsAny, selectionOf } from '../bench/lib/selection';

describe('pnpm bench scenario groups', () => {
  it('runs every group, as the record, when none is named', () => {
    const selection = selectionOf([]);
    expect(selection).toEqual({ groups: Object.keys(GROUPS), full: true });
    expect(runsAny(selection, 'relay')).toBe(true);
  });

  it('runs only the groups named, in the bench order, and is no record', () => {
    const selection = selectionOf(['webhooks', 'bookings', 'webhooks']);
    expect(selection).toEqual({ groups: ['bookings', 'webhooks'], full: false });
    expect(runsAny(selection, 'holds', 'scale')).toBe(false);
    expect(runsAny(selection, 'holds', 'webhooks')).toBe(true);
  });

  it('refuses a name it does not know, listing the groups', () => {
    expect(() => selectionOf(['bookings', 'hold'])).toThrow(
      /unknown scenario group\(s\): hold;[\s\S]*\n {2}holds +the hold ceilings/,
    );
  });
});
