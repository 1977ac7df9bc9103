import { loadConfig } from '@booking/config';
import { createApp } from '../src/app';
import { closeAppDeps, createAppDeps, type AppDeps } from '../src/app-deps';
import { buildOpenApiDocument } from '../src/openapi/openapi-document';
import { isUndocumented } from '../src/openapi/undocumented-routes';

/** What the walk needs of an Express 5 router layer. */
interface Layer {
  rawPath?: string;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

interface Walked {
  /** `METHOD /path/{param}` of every route. */
  routes: string[];
  /** Handlers mounted under a path of their own (static files, a sub-app): not routes we can list. */
  mounts: string[];
}

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * The app's routes, with Express's `:id` as OpenAPI's `{id}`. Routes go on the app itself (see
 * app.ts), so a router mounted without a path, whose routes this would not see, is refused.
 */
function walk(stack: Layer[]): Walked {
  const found: Walked = { routes: [], mounts: [] };
  for (const layer of stack) {
    if (layer.route) {
      if (typeof layer.route.path !== 'string')
        throw new Error(`a route path that is not a string: ${String(layer.route.path)}`);
      const path = layer.route.path.replace(/:(\w+)/g, '{$1}');
      for (const method of Object.keys(layer.route.methods).filter((m) => m !== '_all')) {
        found.routes.push(`${method.toUpperCase()} ${path}`);
      }
    } else if (layer.rawPath !== undefined && layer.rawPath !== '/') {
      found.mounts.push(layer.rawPath);
    } else if (layer.handle.stack) {
      throw new Error('a router mounted on the app without a path: add its routes to the app instead');
    }
  }
  return found;
}

describe('the OpenAPI document and the routes of the app', () => {
  let deps: AppDeps;

  beforeAll(() => {
    // With the queue dashboard mounted: every route the app can have is walked.
    deps = createAppDeps(loadConfig({ ...process.env, QUEUE_DASHBOARD_PASSWORD: 'walk-every-route' }));
  });
  afterAll(() => closeAppDeps(deps));

  it('when the router is walked, then every route has an operation and every operation a route', () => {
    const app = createApp(deps) as unknown as { router: { stack: Layer[] } };
    const { routes, mounts } = walk(app.router.stack);
    const documented = Object.entries(buildOpenApiDocument(deps.config).paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => HTTP_METHODS.includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );

    const api = routes.filter((route) => !isUndocumented(route.split(' ')[1]!));
    console.log(`${api.length} routes checked against ${documented.length} documented operations`);
    expect(api.filter((route) => !documented.includes(route))).toEqual([]);
    expect(documented.filter((operation) => !api.includes(operation))).toEqual([]);
    expect(new Set(api).size).toBe(api.length);
    expect(api.length).toBeGreaterThanOrEqual(40);
    // What is left out is left out on purpose, and exists.
    expect(mounts.filter((mount) => !isUndocumented(mount))).toEqual([]);
    expect(routes.length + mounts.length).toBeGreaterThan(api.length);
  });
});
