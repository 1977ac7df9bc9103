import { startHaproxy, type Haproxy } from '@booking/test-kit';
import { holdRequests, sideLabel, startApi, type Api } from '../lib/api';
import type { Catalogue } from '../lib/catalogue';
import { rssMb, stopChild } from '../lib/children';
import { figures, measureSideBySide, type Measured, type Side } from '../lib/load';
import { noRows, type CheckoutRows, type Row } from '../lib/report';
import { MANY_SLOTS } from './holds';

const HOLD_ONE = `lb: hold via HAProxy, 1 API pinned to core 0, ${MANY_SLOTS} slots`;
const HOLD_TWO = `lb: hold via HAProxy, 2 APIs pinned to cores 0 and 1, ${MANY_SLOTS} slots`;
const READ_ONE = 'lb: widget read via HAProxy, 1 API pinned to core 0';
const READ_TWO = 'lb: widget read via HAProxy, 2 APIs pinned to cores 0 and 1';

/** HAProxy adds the client's address to X-Forwarded-For; the API believes that one hop. */
const BEHIND_PROXY = { TRUST_PROXY: '1' };

/** One checkout's set-up: its 2 replicas, a proxy in front of the first and one in front of both. */
interface Replicas {
  catalogue: Catalogue;
  apis: Api[];
  one?: Haproxy;
  two?: Haproxy;
  slots: string[];
}

/** HAProxy in front of `apis`, once it sees every one of them UP. */
async function proxyFor(apis: Api[]): Promise<Haproxy> {
  const names = apis.map((_, i) => `api-${i + 1}`);
  const proxy = await startHaproxy({
    upstreams: apis.map((api, i) => ({ name: names[i]!, port: Number(new URL(api.url).port) })),
  });
  try {
    await proxy.waitFor('UP', names);
  } catch (error) {
    await proxy.stop();
    throw error;
  }
  return proxy;
}

const served = async (proxy: Haproxy) => (await proxy.stats()).map((s) => `${s.name} ${s.responses['2xx']}`).join(', ');

const row = (name: string, m: Measured, apis: Api[], servedBy: string, against?: string): Row => ({
  name,
  unit: 'rps',
  ...(against ? { against } : {}),
  ...figures(m, `2xx by replica, warm-ups included: ${servedBy}`),
  rssMb: Object.fromEntries(apis.map((api, i) => [`api${i + 1}`, rssMb(api.child)])),
});

/**
 * The same HAProxy set-up the load-balancer test uses (round robin, health checks on /readyz,
 * forwardfor) in front of 1 API replica on core 0, and of 2 on cores 0 and 1: holds on 200 slots,
 * then the widget read, each through the proxy. Every checkout's 1-replica and 2-replica runs are
 * measured side by side (the second replica idle in the first's rounds), so each 2-replica ratio
 * is to 1 replica measured in the same rounds. HAProxy itself is not pinned.
 */
export async function apiLoadBalancer(catalogues: Catalogue[]): Promise<CheckoutRows> {
  const set: Replicas[] = [];
  try {
    for (const catalogue of catalogues) {
      const { checkout, databaseUrl, target } = catalogue;
      const replicas: Replicas = { catalogue, apis: [], slots: await target.makeSlots(MANY_SLOTS) };
      set.push(replicas);
      for (const core of [0, 1]) replicas.apis.push(await startApi(checkout, databaseUrl, core, BEHIND_PROXY));
      replicas.one = await proxyFor(replicas.apis.slice(0, 1));
      replicas.two = await proxyFor(replicas.apis);
    }
    const sides = (names: [string, string], requests: (r: Replicas) => Side['run']['requests']): Side[] =>
      set.flatMap((r) =>
        [r.one!, r.two!].map((proxy, i) => ({
          label: sideLabel(names[i]!, r.catalogue.checkout),
          run: { urls: [proxy.url], requests: requests(r) },
        })),
      );
    const holds = await measureSideBySide(
      sides([HOLD_ONE, HOLD_TWO], (r) => holdRequests(r.catalogue.target.experienceId, r.slots)),
    );
    const reads = await measureSideBySide(
      sides([READ_ONE, READ_TWO], (r) => [{ method: 'GET', path: r.catalogue.target.widgetPath }]),
    );
    const rows = noRows();
    for (const [i, r] of set.entries()) {
      const [byOne, byTwo] = [await served(r.one!), await served(r.two!)];
      rows[r.catalogue.checkout.label].push(
        row(HOLD_ONE, holds[2 * i]!, r.apis.slice(0, 1), byOne),
        row(READ_ONE, reads[2 * i]!, r.apis.slice(0, 1), byOne),
        row(HOLD_TWO, holds[2 * i + 1]!, r.apis, byTwo, HOLD_ONE),
        row(READ_TWO, reads[2 * i + 1]!, r.apis, byTwo, READ_ONE),
      );
    }
    return rows;
  } finally {
    for (const r of set) {
      await Promise.all([r.one?.stop(), r.two?.stop()]);
      await Promise.all(r.apis.map((api) => stopChild(api.child)));
    }
  }
}
