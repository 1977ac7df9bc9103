import { sideLabel, type CheckoutApi } from '../lib/api';
import { besideBaseline, withBaseline } from '../lib/baseline';
import { rssMb } from '../lib/children';
import { figures } from '../lib/load';
import { noRows, type CheckoutRows } from '../lib/report';

const WIDGET_READ = 'widget read via API: one experience, its 6 slots of the next 14 days';

/**
 * The anonymous widget's read (GET /api/widget/experience, an experience with only its seeded
 * slots, so its cost does not grow with the slots other scenarios make) through one API process
 * of each checkout, side by side with the baseline.
 */
export async function apiWidgetRead(apps: CheckoutApi[]): Promise<CheckoutRows> {
  return withBaseline(async (baselineUrl) => {
    const [baseline, reads] = await besideBaseline(
      baselineUrl,
      WIDGET_READ,
      apps.map((app) => ({
        label: sideLabel(WIDGET_READ, app),
        run: { urls: [app.api.url], requests: [{ method: 'GET', path: app.target.widgetPath }] },
      })),
    );
    const rows = noRows();
    rows.after.push(baseline);
    apps.forEach((app, i) =>
      rows[app.label].push({
        name: WIDGET_READ,
        unit: 'rps',
        against: baseline.name,
        ...figures(reads[i]!),
        rssMb: { api: rssMb(app.api.child) },
      }),
    );
    return rows;
  });
}
