export interface GroupedCalls<I, O> {
  /** Resolves with this item's result once its group has run; rejects when its group failed. */
  call(item: I): Promise<O>;
  /** Runs what waits and resolves when every group has ended. */
  close(): Promise<void>;
}

export interface GroupOptions<I> {
  /** Most items in one group. */
  maxGroup: number;
  /** Longest an item waits for others while another group is running. */
  maxWaitMs: number;
  /** Items that must not share a group (the later one goes in the next). */
  clash?: (a: I, b: I) => boolean;
}

interface Waiting<I, O> {
  item: I;
  resolve(result: O): void;
  reject(error: unknown): void;
}

/**
 * Gathers concurrent calls into groups that `run` handles at once (one statement or transaction
 * for many jobs). A group starts when no other is running (so a lone call never waits), when it
 * holds `maxGroup` items, or `maxWaitMs` after its first item; what gathered while a group ran
 * starts as soon as it ends. `run` returns one result per item, in order; when it throws, every
 * call of the group rejects with its error.
 */
export function groupCalls<I, O>(run: (items: I[]) => Promise<O[]>, options: GroupOptions<I>): GroupedCalls<I, O> {
  let gathering: Waiting<I, O>[] = [];
  let timer: NodeJS.Timeout | undefined;
  let running = 0;
  const inFlight = new Set<Promise<void>>();

  const start = () => {
    clearTimeout(timer);
    timer = undefined;
    if (gathering.length === 0) return;
    const group = gathering;
    gathering = [];
    running += 1;
    const done = run(group.map((w) => w.item))
      .then(
        (results) => group.forEach((w, i) => w.resolve(results[i]!)),
        (error: unknown) => group.forEach((w) => w.reject(error)),
      )
      .finally(() => {
        running -= 1;
        inFlight.delete(done);
        if (running === 0) start();
      });
    inFlight.add(done);
  };

  return {
    call(item) {
      return new Promise<O>((resolve, reject) => {
        if (options.clash && gathering.some((w) => options.clash!(w.item, item))) start();
        gathering.push({ item, resolve, reject });
        if (running === 0 || gathering.length >= options.maxGroup) start();
        else timer ??= setTimeout(start, options.maxWaitMs);
      });
    },
    async close() {
      start();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
