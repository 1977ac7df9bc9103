/**
 * The scenarios `pnpm bench` runs: all of them, or the groups named on its command line
 * (`pnpm bench bookings webhooks`), each with the ceilings and baselines of its rows. A partial
 * run is for working on one hot path: a minute for bookings, a few at most for the larger
 * groups, where the whole bench takes six to twelve. It writes its own file, so
 * `bench/results/latest.json` always holds a full run.
 */
export const GROUPS = {
  holds: 'the hold ceilings and holds via the API (200 slots, the hot slot, the hold cost)',
  widget: 'the widget read via the API',
  bookings: 'bookings via the API and the booking ceiling',
  webhooks: 'the BullMQ ceilings and the dispatcher burst, with its relay stage',
  relay: "the relay's poll over relayed events awaiting VACUUM",
  scale: '1 against 2 pinned APIs, and 1 against 2 pinned dispatchers',
  lb: '1 against 2 API replicas behind HAProxy',
} as const;

export type Group = keyof typeof GROUPS;

export interface Selection {
  /** The groups named, or every group when none was. */
  groups: Group[];
  /** True when every group runs: the full run, whose figures are the record. */
  full: boolean;
}

const ALL = Object.keys(GROUPS) as Group[];
const isGroup = (name: string): name is Group => Object.hasOwn(GROUPS, name);

/**
 * The groups `args` name; an unknown name is an error that lists the known ones. A `--` is passed
 * over: `pnpm bench -- bookings` hands it on to the script.
 */
export function selectionOf(args: string[]): Selection {
  const names = args.filter((arg) => arg !== '--');
  const unknown = names.filter((name) => !isGroup(name));
  if (unknown.length > 0) {
    const known = Object.entries(GROUPS).map(([name, what]) => `  ${name.padEnd(9)}${what}`);
    throw new Error(
      `unknown scenario group(s): ${unknown.join(', ')}; pnpm bench [group ...] runs\n${known.join('\n')}`,
    );
  }
  const named = new Set(names);
  const groups = named.size === 0 ? ALL : ALL.filter((group) => named.has(group));
  return { groups, full: groups.length === ALL.length };
}

/** The selection this process's command line names; an unknown group ends it (status 2), saying which groups there are. */
export function commandLineSelection(): Selection {
  try {
    return selectionOf(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
}

/** Whether `selection` runs any of `groups`. */
export const runsAny = (selection: Selection, ...groups: Group[]) =>
  groups.some((group) => selection.groups.includes(group));

/** What the selected groups need set up, and for which checkouts. */
export const needs = (selection: Selection) => ({
  /** A catalogue (the tenant and slots the API groups book on) per checkout. */
  catalogues: runsAny(selection, 'holds', 'widget', 'bookings', 'scale', 'lb'),
  /** One API per checkout, up through the side-by-side scenarios. */
  sideBySideApis: runsAny(selection, 'holds', 'widget', 'bookings'),
  /** The webhook receiver and this checkout's outbox (all the relay's poll needs). */
  outboxes: runsAny(selection, 'webhooks', 'scale', 'relay'),
  /** An outbox for the before checkout too: its dispatchers run beside this checkout's. */
  everyCheckoutsOutbox: runsAny(selection, 'webhooks', 'scale'),
});
