import type { Api } from '../lib/api';
import { besideBaseline, withBaseline } from '../lib/baseline';
import type { Target } from '../lib/catalogue';
import { rssMb } from '../lib/children';
import { figures, type Run } from '../lib/load';
import type { Row } from '../lib/report';

const WIDGET_READ = 'widget read via API: one experience, its 6 slots of the next 14 days';

/**
 * The anonymous widget's read (GET /api/widget/experience, an experience with only its seeded
 * slots, so its cost does not grow with the slots other scenarios make) through one API process,
 * beside the baseline.
 */
export async function apiWidgetRead(api: Api, target: Target): Promise<Row[]> {
  return withBaseline(async (baselineUrl) => {
    const run: Run = { urls: [api.url], requests: [{ method: 'GET', path: target.widgetPath }] };
    const [baseline, read] = await besideBaseline(baselineUrl, WIDGET_READ, run);
    return [
      baseline,
      { name: WIDGET_READ, unit: 'rps', against: baseline.name, ...figures(read), rssMb: { api: rssMb(api.child) } },
    ];
  });
}
