import type { CheckoutApi } from '../lib/api';
import { apisBesideBaseline, withBaseline } from '../lib/baseline';
import type { CheckoutRows } from '../lib/report';

const WIDGET_READ = 'widget read via API: one experience, its 6 slots of the next 14 days';

/**
 * The anonymous widget's read (GET /api/widget/experience, an experience with only its seeded
 * slots, so its cost does not grow with the slots other scenarios make) through one API process
 * of each checkout, side by side with the baseline.
 */
export async function apiWidgetRead(apps: CheckoutApi[]): Promise<CheckoutRows> {
  return withBaseline((baselineUrl) =>
    apisBesideBaseline(
      baselineUrl,
      WIDGET_READ,
      apps.map((app) => ({
        app,
        run: { urls: [app.api.url], requests: [{ method: 'GET', path: app.target.widgetPath }] },
      })),
    ),
  );
}
