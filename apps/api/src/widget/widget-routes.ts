import type { IRouter } from 'express';
import type { AppDeps } from '../app-deps';
import { createParser } from '../http/validation';
import { getWidgetExperience } from './get-widget-experience';
import { WidgetQuery } from './widget-schemas';

const parseQuery = createParser(WidgetQuery, 'invalid_query');

export function widgetRoutes(router: IRouter, deps: AppDeps): void {
  router.get('/api/widget/experience', async (req, res) => {
    res.json(await getWidgetExperience(deps, parseQuery(req.query)));
  });
}
