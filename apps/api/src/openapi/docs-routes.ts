import type { IRouter } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { AppDeps } from '../app-deps';
import { buildOpenApiDocument } from './openapi-document';

/** `/api/openapi.json` and a Swagger UI at `/api/docs`, served from local assets. */
export function docsRoutes(router: IRouter, deps: AppDeps): void {
  const document = buildOpenApiDocument(deps.config);
  router.get('/api/openapi.json', (_req, res) => {
    res.json(document);
  });
  router.use('/api/docs', swaggerUi.serve, swaggerUi.setup(document));
}
