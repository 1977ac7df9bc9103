import { EndpointPlaces, type Place } from './endpoint-places';

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
    const first = (await places.take('a'))!;
    const second = (await places.take('a'))!;
    const third = places.take('a');

    expect(await settled(third)).toBe(false);
    expect(places.waitingJobs()).toBe(1);
    first.release();
    expect(await settled(third)).toBe(true);
    expect(places.waitingJobs()).toBe(0);
    expect(await third).not.toBeNull();
    expect(second.waitedMs).toBeLessThan(25);
  });

  it('keeps endpoints apart', async () => {
    const places = new EndpointPlaces(1);
    await places.take('a');
    const other = places.take('b');

    expect(await settled(other)).toBe(true);
    expect(await settled(places.take('a'))).toBe(false);
  });

  it('hands places over first come first served, and counts a second release of one place once', async () => {
    const places = new EndpointPlaces(1);
    const holder = (await places.take('a'))!;
    const order: number[] = [];
    const waiting = [1, 2, 3].map((n) =>
      places.take('a').then((place) => {
        order.push(n);
        return place!;
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

  it('says how long a job waited', async () => {
    const places = new EndpointPlaces(1);
    const holder = (await places.take('a'))!;
    const waiting = places.take('a');
    await new Promise((resolve) => setTimeout(resolve, 30));
    holder.release();

    expect((await waiting)!.waitedMs).toBeGreaterThanOrEqual(25);
    expect(holder.waitedMs).toBeLessThan(25);
  });

  it('once closing, gives waiting and later jobs no place, while places held are released as usual', async () => {
    const places = new EndpointPlaces(1);
    const holder = (await places.take('a'))!;
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
      const place: Place = (await places.take(`e${n % 2}`))!;
      holding += n % 2 === 0 ? 1 : 0;
      most = Math.max(most, holding);
      await new Promise((resolve) => setTimeout(resolve, n % 5));
      holding -= n % 2 === 0 ? 1 : 0;
      place.release();
    };
    await Promise.all(Array.from({ length: 60 }, (_, n) => job(n)));

    expect(most).toBe(3);
  });
});
