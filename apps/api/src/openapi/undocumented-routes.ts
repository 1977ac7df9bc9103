/**
 * What the OpenAPI document leaves out on purpose, by path prefix: the document itself and its
 * viewer, and the queue dashboard, which is for whoever runs the service rather than a client
 * of the API (and is mounted only with QUEUE_DASHBOARD_PASSWORD). Everything else the app
 * routes is in the document, as apps/api/test/openapi-routes.integration-test.ts checks.
 */
const UNDOCUMENTED_ROUTES = ['/api/openapi.json', '/api/docs', '/api/admin/queues'];

export const isUndocumented = (path: string) =>
  UNDOCUMENTED_ROUTES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
