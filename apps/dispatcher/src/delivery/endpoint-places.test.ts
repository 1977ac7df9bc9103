import { EndpointPlaces, type Place, type StepAside } from './endpoint-places';

/** The place `turn` gives; fails the test when it is none. */
function held(turn: Place | StepAside | null): Place {
  if (turn === null || !('release' in turn)) throw new Error(`expected a place, got ${JSON.stringify(turn)}`);
  return turn;
}

/** The delay `turn` asks for; fails the test when it is a place or none. */
function comeBackIn(turn: Place | StepAside | null): number {
  if (turn === null || 'release' in turn) throw new Error('expected a step aside');
  return turn.comeBackInMs;
}

/** Whether `promise` has settled after the current microtasks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('EndpointPlaces', () => {
  it('gives an endpoint its places at once, and the next one only when one is released', async () => {
    const places = new EndpointPlaces(2);
    const first = held(await places.take('a'));
    const second = held(await places.take('a'));
    const third = places.take('a');

    expect(await settled(third)).toBe(false);
    expect(places.waitingJobs()).toBe(1);
    first.release();
    expect(await settled(third)).toBe(true);
    expect(places.waitingJobs()).toBe(0);
    held(await third);
    second.release();
  });

  it('keeps endpoints apart', async () => {
    const places = new EndpointPlaces(1);
    await places.take('a');
    const other = places.take('b');

    expect(await settled(other)).toBe(true);
    expect(await settled(places.take('a'))).toBe(false);
    places.close();
  });

  it('hands places over first come first served, and counts a second release of one place once', async () => {
    const places = new EndpointPlaces(1);
    const holder = held(await places.take('a'));
    const order: number[] = [];
    const waiting = [1, 2, 3].map((n) =>
      places.take('a').then((place) => {
        order.push(n);
        return held(place);
      }),
    );

    holder.release();
    holder.release();
    const firstWaiter = await waiting[0]!;
    expect(await settled(waiting[1]!)).toBe(false);
    firstWaiter.release();
    (await waiting[1]!).release();
    (await waiting[2]!).release();
    expect(order).toEqual([1, 2, 3]);
    // All released: the endpoint's place is free again.
    expect(await settled(places.take('a'))).toBe(true);
  });

  it('once closing, gives waiting and later jobs no place, while places held are released as usual', async () => {
    const places = new EndpointPlaces(1);
    const holder = held(await places.take('a'));
    const waiting = places.take('a');

    expect(places.waitingJobs()).toBe(1);
    places.close();

    expect(places.waitingJobs()).toBe(0);
    expect(await waiting).toBeNull();
    expect(await places.take('b')).toBeNull();
    expect(() => holder.release()).not.toThrow();
  });

  it('lets each place be held by one job at a time under many takes and releases', async () => {
    const places = new EndpointPlaces(3);
    let holding = 0;
    let most = 0;
    const job = async (n: number) => {
      const place = held(await places.take(`e${n % 2}`));
      holding += n % 2 === 0 ? 1 : 0;
      most = Math.max(most, holding);
      await new Promise((resolve) => setTimeout(resolve, n % 5));
      holding -= n % 2 === 0 ? 1 : 0;
      place.release();
    };
    await Promise.all(Array.from({ length: 60 }, (_, n) => job(n)));

    expect(most).toBe(3);
  });

  describe('stepping aside', () => {
    let now = 0;
    const clock = { now: () => now, random: () => 0 };
    beforeEach(() => (now = 0));
    const MINUTE = 60_000;

    it('tells a job whose wait would pass a second to come back when a place should be free, and spaces those after it at the endpoint pace', async () => {
      const places = new EndpointPlaces(2, clock);
      held(await places.take('a'));
      held(await places.take('a'));
      // Nothing has answered yet, but the requests in flight have taken 600 ms so far.
      now = 600;
      const waiting = [places.take('a'), places.take('a'), places.take('a')];

      expect(await Promise.all(waiting.map(settled))).toEqual([false, false, false]);
      expect(places.waitingJobs()).toBe(3);
      // A fourth waiter would be (3 + 1) / 2 holds of 600 ms away.
      expect(comeBackIn(await places.take('a'))).toBe(1_200);
      expect(comeBackIn(await places.take('a'))).toBe(1_500);
      expect(comeBackIn(await places.take('a'))).toBe(1_800);
      expect(places.waitingJobs()).toBe(3);
      // Another endpoint is not held up.
      held(await places.take('b'));
      places.close();
    });

    it('keeps jobs of an endpoint that answers quickly waiting, however many, while their wait stays under a second', async () => {
      const places = new EndpointPlaces(1, clock);
      const first = held(await places.take('a'));
      now = 10;
      first.release();
      held(await places.take('a'));
      const waiting = Array.from({ length: 100 }, () => places.take('a'));

      expect(places.waitingJobs()).toBe(100);
      expect(comeBackIn(await places.take('a'))).toBe(1_010);
      expect(await settled(waiting[99]!)).toBe(false);
      places.close();
    });

    it('keeps jobs waiting behind one stuck request while the other place comes and goes quickly', async () => {
      const places = new EndpointPlaces(2, clock);
      held(await places.take('a'));
      const quick = held(await places.take('a'));
      now = 5;
      quick.release();
      now = 890;
      const next = held(await places.take('a'));
      now = 895;
      next.release();
      held(await places.take('a'));
      now = 900;
      const waiting = Array.from({ length: 4 }, () => places.take('a'));

      // The first request has been in flight for 900 ms, the newest for 5: places come free every 5 ms.
      expect(await Promise.all(waiting.map(settled))).toEqual([false, false, false, false]);
      places.close();
    });

    it('counts a request that took far longer than the others as four times their average at most', async () => {
      const places = new EndpointPlaces(2, clock);
      const quick = held(await places.take('a'));
      now = 50;
      quick.release();
      const stuck = held(await places.take('a'));
      now = 10_050;
      stuck.release();
      held(await places.take('a'));
      held(await places.take('a'));
      // The average is now 80 ms (50, then 200 for the 10 s request): 20 waiters are 800 ms away.
      const waiting = Array.from({ length: 20 }, () => places.take('a'));

      expect(await Promise.all(waiting.map(settled))).toEqual(Array.from({ length: 20 }, () => false));
      places.close();
    });

    it('spaces the jobs stepping aside during a stall of every place by the usual hold, not by the stall', async () => {
      const places = new EndpointPlaces(2, clock);
      const usual = held(await places.take('a'));
      now = 50;
      usual.release();
      held(await places.take('a'));
      held(await places.take('a'));
      // Both places stuck for 10 s, where a hold usually takes 50 ms.
      now = 10_050;

      const delays = [];
      for (let n = 0; n < 3; n += 1) delays.push(comeBackIn(await places.take('a')));
      // Each job's own wait is half the stall so far; those after it follow 200 ms / 2 apart.
      expect(delays).toEqual([5_000, 5_100, 5_200]);
    });

    it('tells jobs still waiting after a second to step aside then, each due at its own turn', async () => {
      jest.useFakeTimers();
      try {
        const places = new EndpointPlaces(2, clock);
        const holders = [held(await places.take('a')), held(await places.take('a'))];
        const waiting = Array.from({ length: 4 }, () => places.take('a'));
        expect(places.waitingJobs()).toBe(4);

        now = 1_000;
        jest.advanceTimersByTime(1_000);
        jest.runOnlyPendingTimers();
        // The places have been held a second so far: the first in line is half a second away,
        // and each after it half a second more.
        expect(await Promise.all(waiting.map(async (w) => comeBackIn(await w)))).toEqual([500, 1_000, 1_500, 2_000]);
        expect(places.waitingJobs()).toBe(0);
        holders[0]!.release();
        held(await places.take('a'));
      } finally {
        jest.useRealTimers();
      }
    });

    it('lets a waiting job have a place released as its second runs out', async () => {
      jest.useFakeTimers();
      try {
        const places = new EndpointPlaces(1, clock);
        const holder = held(await places.take('a'));
        const waiting = places.take('a');

        // The answer and the timer are both due when the process gets to them: the answer first.
        jest.advanceTimersByTime(1_000);
        holder.release();
        jest.runAllTimers();

        held(await waiting);
      } finally {
        jest.useRealTimers();
      }
    });

    it("puts a job off to the second half of its horizon at most: a minute, or half the time the endpoint's jobs have been stepping aside, up to a quarter of an hour", async () => {
      const places = new EndpointPlaces(1, clock);
      const stuck = held(await places.take('a'));
      /** Jobs go on stepping aside, 50 s apart, until `until`, when one more does: its delay. */
      const stepAsideUntil = async (until: number) => {
        while (now + 50_000 < until) {
          now += 50_000;
          comeBackIn(await places.take('a'));
        }
        now = until;
        return comeBackIn(await places.take('a'));
      };
      now = 20 * MINUTE;

      expect(comeBackIn(await places.take('a'))).toBe(MINUTE / 2);
      expect(await stepAsideUntil(30 * MINUTE)).toBe(2.5 * MINUTE);
      expect(await stepAsideUntil(60 * MINUTE)).toBe(7.5 * MINUTE);
      // A place comes free and is taken again: the backlog goes on.
      stuck.release();
      held(await places.take('a'));
      expect(await stepAsideUntil(60 * MINUTE + 2_000)).toBe(7.5 * MINUTE);
      // No job stepped aside for over a minute: a new backlog, with a horizon of a minute
      // (though the average hold is now an hour).
      now = 62 * MINUTE;
      expect(comeBackIn(await places.take('a'))).toBe(MINUTE / 2);
    });

    it('spreads the jobs put off past their horizon over its second half', async () => {
      const places = new EndpointPlaces(1, { now: () => now, random: () => 0.5 });
      held(await places.take('a'));
      now = 20 * MINUTE;

      expect(comeBackIn(await places.take('a'))).toBe(0.75 * MINUTE);
    });

    it('keeps the line of jobs stepped aside while places come free, and starts it again after a minute with none stepping aside', async () => {
      const places = new EndpointPlaces(1, clock);
      const slow = held(await places.take('a'));
      now = 3_000;
      expect(comeBackIn(await places.take('a'))).toBe(3_000);
      expect(comeBackIn(await places.take('a'))).toBe(6_000);
      slow.release();
      const next = held(await places.take('a'));
      now = 3_100;

      // Behind the two put off before, whose turns are still to come.
      expect(comeBackIn(await places.take('a'))).toBe(8_900);
      now = 70_000;
      next.release();
      held(await places.take('a'));
      now = 70_100;
      // A new backlog: one hold from now (the average: 3 s, then 67 s counted as 12).
      expect(comeBackIn(await places.take('a'))).toBe(4_800);
    });

    it('remembers the pace of an idle endpoint, and forgets it when ten thousand others are remembered', async () => {
      const places = new EndpointPlaces(1, clock);
      const slow = held(await places.take('a'));
      now = 2_000;
      slow.release();
      held(await places.take('a'));
      expect(comeBackIn(await places.take('a'))).toBe(2_000);

      for (let n = 0; n < 10_000; n += 1) held(await places.take(`e${n}`)).release();
      const busy = held(await places.take('c'));
      now = 4_000;
      busy.release();
      held(await places.take('c'));
      expect(await settled(places.take('c'))).toBe(false);
      places.close();
    });
  });
});
