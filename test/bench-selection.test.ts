import { GROUPS, needs, runsAny, selectionOf } from '../bench/lib/selection';

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

  it('is the full record when every group is named, and passes over the -- pnpm hands on', () => {
    expect(selectionOf(['--', ...Object.keys(GROUPS)]).full).toBe(true);
    expect(selectionOf(['--', 'lb'])).toEqual({ groups: ['lb'], full: false });
  });

  it('sets up only what the groups run need', () => {
    expect(needs(selectionOf(['lb']))).toEqual({
      catalogues: true,
      sideBySideApis: false,
      outboxes: false,
      everyCheckoutsOutbox: false,
    });
    expect(needs(selectionOf(['relay']))).toEqual({
      catalogues: false,
      sideBySideApis: false,
      outboxes: true,
      everyCheckoutsOutbox: false,
    });
    expect(needs(selectionOf(['bookings', 'scale']))).toEqual({
      catalogues: true,
      sideBySideApis: true,
      outboxes: true,
      everyCheckoutsOutbox: true,
    });
  });

  it('refuses a name it does not know, listing the groups', () => {
    expect(() => selectionOf(['bookings', 'hold'])).toThrow(
      /unknown scenario group\(s\): hold;[\s\S]*\n {2}holds +the hold ceilings/,
    );
  });
});
