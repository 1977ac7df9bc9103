import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { seedTenant, waitUntil } from '@booking/test-kit';
import { startHarness, TenantClient, type WebhookHarness } from './support/webhook-harness';

/**
 * A receiver that answers every request after `delayMs` and counts how many it has open at once
 * (from the request's arrival until its response is sent or the client hangs up).
 */
async function countingReceiver(delayMs: number) {
  let open = 0;
  const state = { maxOpen: 0, arrivals: [] as { deliveryId: string; at: number }[] };
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    open += 1;
    state.maxOpen = Math.max(state.maxOpen, open);
    state.arrivals.push({ deliveryId: String(req.headers['x-service-delivery-id']), at: Date.now() });
    res.on('close', () => (open -= 1));
    req.resume();
    const timer = setTimeout(() => {
      timers.delete(timer);
      res.writeHead(200).end('ok');
    }, delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    state,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Receiver = Awaited<ReturnType<typeof countingReceiver>>;

describe("an endpoint's places in a dispatcher process (WEBHOOK_ENDPOINT_CONCURRENCY)", () => {
  let h: WebhookHarness;
  let tenant: TenantClient;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    h = await startHarness({
      WEBHOOK_CONCURRENCY: '8',
      WEBHOOK_ENDPOINT_CONCURRENCY: '2',
      // A 10 s job lock (the least), so a job whose lock is lost moves on within about 10 s.
      WEBHOOK_TIMEOUT_MS: '3000',
    });
    tenant = new TenantClient(h.t, await seedTenant(h.t.deps));
  });
  afterAll(async () => {
    await h?.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  const receiver = async (delayMs: number) => {
    const started = await countingReceiver(delayMs);
    receivers.push(started);
    return started;
  };
  /** `count` test deliveries to `endpointId`, queued one after another; their ids. */
  const sendTests = async (endpointId: string, count: number) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const res = await tenant.sendTest(endpointId);
      if (res.status !== 202) throw new Error(`test delivery refused: ${res.status}`);
      ids.push((res.body as { delivery_id: string }).delivery_id);
    }
    return ids;
  };
  const statusesOf = async (ids: string[]) =>
    (await h.t.deps.db.webhookDelivery.findMany({ where: { id: { in: ids } }, select: { status: true } })).map(
      (d) => d.status,
    );
  /** Those of `ids` still pending with their next attempt set: stepped aside (none of these fails first). */
  const putOff = async (ids: string[]) =>
    (
      await h.t.deps.db.webhookDelivery.findMany({
        where: { id: { in: ids }, status: 'pending', nextAttemptAt: { not: null } },
        select: { id: true },
      })
    ).map((d) => d.id);
  const firstTwoSent = (r: Receiver) =>
    waitUntil(() => r.state.arrivals.length >= 2, { timeoutMs: 5_000, what: 'the first two requests' });
  const somePutOff = (ids: string[]) =>
    waitUntil(async () => (await putOff(ids)).length > 0, { timeoutMs: 5_000, what: 'deliveries put off' });
  const allSucceeded = (ids: string[], timeoutMs: number) =>
    waitUntil(async () => (await statusesOf(ids)).every((s) => s === 'succeeded'), {
      timeoutMs,
      what: `${ids.length} deliveries recorded as succeeded`,
    });
  /** `receiver` got one request for each of `ids`, and no other. */
  const sentOnceEach = (r: Receiver, ids: string[]) => {
    const sent = r.state.arrivals.map((a) => a.deliveryId);
    expect(sent).toHaveLength(ids.length);
    expect(new Set(sent)).toEqual(new Set(ids));
  };

  it('sends one endpoint at most that many requests at once, and every delivery in turn', async () => {
    const slow = await receiver(300);
    const endpoint = await tenant.createEndpoint(slow.url);

    const ids = await sendTests(endpoint.id, 8);

    await waitUntil(() => slow.state.arrivals.length >= 8, { timeoutMs: 10_000, what: '8 deliveries' });
    // 8 jobs at once in the process (WEBHOOK_CONCURRENCY), 2 requests at once to the endpoint.
    expect(slow.state.maxOpen).toBe(2);
    expect(new Set(slow.state.arrivals.map((a) => a.deliveryId))).toEqual(new Set(ids));
    await allSucceeded(ids, 5_000);
  });

  it("does not hold another endpoint's deliveries behind a busy one's", async () => {
    const slow = await receiver(1_000);
    const fast = await receiver(0);
    const busy = await tenant.createEndpoint(slow.url);
    const other = await tenant.createEndpoint(fast.url);

    await sendTests(busy.id, 4);
    await waitUntil(() => slow.state.arrivals.length >= 1, { timeoutMs: 5_000, what: 'the busy endpoint sending' });
    const [otherId] = await sendTests(other.id, 1);

    await waitUntil(() => fast.state.arrivals.length >= 1, { timeoutMs: 5_000, what: 'the other delivery' });
    // The busy endpoint's last two requests wait for its first two (1 s each); the other
    // endpoint's went out meanwhile.
    expect(fast.state.arrivals[0]!.deliveryId).toBe(otherId);
    expect(slow.state.arrivals.length).toBeLessThan(4);
    await waitUntil(() => slow.state.arrivals.length >= 4, { timeoutMs: 5_000, what: 'the busy endpoint done' });
    expect(slow.state.maxOpen).toBe(2);
  });

  it("steps a slow endpoint's backlog aside, so another endpoint's delivery goes out at once, and sends the backlog once each at its pace", async () => {
    const slow = await receiver(1_000);
    const fast = await receiver(0);
    const busy = await tenant.createEndpoint(slow.url);
    const other = await tenant.createEndpoint(fast.url);

    const backlog = await sendTests(busy.id, 12);
    await firstTwoSent(slow);
    // Past a second, the jobs waiting behind them step aside: due later, their next attempt
    // written down for the sweeper and the delivery log.
    await somePutOff(backlog);
    const queued = Date.now();
    const [otherId] = await sendTests(other.id, 1);

    await waitUntil(() => fast.state.arrivals.length >= 1, { timeoutMs: 5_000, what: 'the other delivery' });
    // Without stepping aside, all 8 worker slots stay with the busy endpoint's jobs until its
    // requests end, 2 a second: the other delivery would wait at least 3 s.
    expect(fast.state.arrivals[0]!.deliveryId).toBe(otherId);
    expect(fast.state.arrivals[0]!.at - queued).toBeLessThan(1_500);

    await allSucceeded(backlog, 30_000);
    sentOnceEach(slow, backlog);
    expect(slow.state.maxOpen).toBe(2);
  }, 40_000);

  it('sends nothing to an endpoint disabled while its deliveries were stepped aside: they wait for its resume', async () => {
    const slow = await receiver(1_500);
    const endpoint = await tenant.createEndpoint(slow.url);

    const ids = await sendTests(endpoint.id, 6);
    await firstTwoSent(slow);
    await somePutOff(ids);
    await h.t.deps.db.webhookEndpoint.update({ where: { id: endpoint.id }, data: { status: 'disabled' } });
    const stepped = await putOff(ids);
    expect(stepped.length).toBeGreaterThan(0);

    await waitUntil(async () => (await statusesOf(stepped)).every((s) => s === 'waiting'), {
      timeoutMs: 15_000,
      what: 'the deliveries put off waiting for the endpoint to be resumed',
    });
    const sent = slow.state.arrivals.map((a) => a.deliveryId);
    expect(stepped.filter((id) => sent.includes(id))).toEqual([]);
  }, 30_000);

  it('stops without waiting for queued requests, which another process then sends once each', async () => {
    const slow = await receiver(2_000);
    const endpoint = await tenant.createEndpoint(slow.url);

    const ids = await sendTests(endpoint.id, 6);
    await firstTwoSent(slow);
    const stopping = Date.now();
    await h.dispatcher.stop();
    const stoppedAfterMs = Date.now() - stopping;

    // The two requests in flight end (within 2 s); the four waiting behind them are not sent by
    // this process, which would have taken 4 s more.
    expect(stoppedAfterMs).toBeLessThan(3_500);
    expect(slow.state.arrivals).toHaveLength(2);

    await h.startDispatcher();
    await allSucceeded(ids, 15_000);
    sentOnceEach(slow, ids);
  });
});
