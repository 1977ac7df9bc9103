import { startHaproxy, type Haproxy } from '@booking/test-kit';
import { holdRequests, startApi, type Api } from '../lib/api';
import type { Target } from '../lib/catalogue';
import { rssMb, stopChild } from '../lib/children';
import type { Checkout } from '../lib/checkout';
import { figures, measure, type Measured } from '../lib/load';
import type { Row } from '../lib/report';
import { MANY_SLOTS } from './holds';

const HOLD_ONE = `lb: hold via HAProxy, 1 API pinned to core 0, ${MANY_SLOTS} slots`;
const HOLD_TWO = `lb: hold via HAProxy, 2 APIs pinned to cores 0 and 1, ${MANY_SLOTS} slots`;
const READ_ONE = 'lb: widget read via HAProxy, 1 API pinned to core 0';
const READ_TWO = 'lb: widget read via HAProxy, 2 APIs pinned to cores 0 and 1';

/** HAProxy adds the client's address to X-Forwarded-For; the API believes that one hop. */
const BEHIND_PROXY = { TRUST_PROXY: '1' };

/** Holds and a widget read through HAProxy in front of the given replicas. */
async function through(apis: Api[], target: Target, slots: string[], labels: [string, string]) {
  const proxy: Haproxy = await startHaproxy({
    upstreams: apis.map((api, i) => ({ name: `api-${i + 1}`, port: Number(new URL(api.url).port) })),
  });
  try {
    await proxy.waitFor(
      'UP',
      apis.map((_, i) => `api-${i + 1}`),
    );
    const holds = await measure(labels[0], { urls: [proxy.url], requests: holdRequests(target.experienceId, slots) });
    const reads = await measure(labels[1], {
      urls: [proxy.url],
      requests: [{ method: 'GET', path: target.widgetPath }],
    });
    return { holds, reads, served: (await proxy.stats()).map((s) => `${s.name} ${s.responses['2xx']}`).join(', ') };
  } finally {
    await proxy.stop();
  }
}

const row = (name: string, m: Measured, apis: Api[], served: string, against?: string): Row => ({
  name,
  unit: 'rps',
  ...(against ? { against } : {}),
  ...figures(m, `2xx by replica, warm-ups included: ${served}`),
  rssMb: Object.fromEntries(apis.map((api, i) => [`api${i + 1}`, rssMb(api.child)])),
});

/**
 * The same HAProxy set-up the load-balancer test uses (round robin, health checks on /readyz,
 * forwardfor) in front of 1 API replica on core 0, then of 2 on cores 0 and 1: holds on 200
 * slots and the widget read, each through the proxy. HAProxy itself is not pinned.
 */
export async function apiLoadBalancer(checkout: Checkout, databaseUrl: string, target: Target): Promise<Row[]> {
  const apis: Api[] = [];
  try {
    const slots = await target.makeSlots(MANY_SLOTS);
    apis.push(await startApi(checkout, databaseUrl, 0, BEHIND_PROXY));
    const one = await through(apis, target, slots, [HOLD_ONE, READ_ONE]);
    const oneRows = [row(HOLD_ONE, one.holds, apis, one.served), row(READ_ONE, one.reads, apis, one.served)];
    apis.push(await startApi(checkout, databaseUrl, 1, BEHIND_PROXY));
    const two = await through(apis, target, slots, [HOLD_TWO, READ_TWO]);
    return [
      ...oneRows,
      row(HOLD_TWO, two.holds, apis, two.served, HOLD_ONE),
      row(READ_TWO, two.reads, apis, two.served, READ_ONE),
    ];
  } finally {
    await Promise.all(apis.map((api) => stopChild(api.child)));
  }
}
