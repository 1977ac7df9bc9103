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

  // catalogues, side-by-side APIs, the receiver and this checkout's outbox, the before checkout's outbox
  it.each([
    ['holds', [true, true, false, false]],
    ['widget', [true, true, false, false]],
    ['bookings', [true, true, false, false]],
    ['webhooks', [false, false, true, true]],
    ['relay', [false, false, true, false]],
    ['scale', [true, false, true, true]],
    ['lb', [true, false, false, false]],
  ] as const)('sets up for %s alone only what it needs', (group, [catalogues, sideBySideApis, outboxes, every]) => {
    expect(needs(selectionOf([group]))).toEqual({
      catalogues,
      sideBySideApis,
      outboxes,
      everyCheckoutsOutbox: every,
    });
  });

  it('sets up for several groups what any of them needs', () => {
    expect(needs(selectionOf(['relay', 'lb']))).toEqual({
      catalogues: true,
      sideBySideApis: false,
      outboxes: true,
      everyCheckoutsOutbox: false,
    });
  });

  it('refuses a name it does not know, listing the groups', () => {
    expect(() => selectionOf(['bookings', 'hold'])).toThrow(
      /unknown scenario group\(s\): hold;[\s\S]*\n {2}holds +the hold ceilings/,
    );
  });
});
