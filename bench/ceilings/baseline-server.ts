/**
 * The baseline: a bare Express 5 app whose one route does one Redis GET. Every hold scenario is
 * measured against it.
 */
import { createRedis } from '@booking/db';
import { REDIS_URL } from '../lib/env';
import { express, listen } from './mini-express';

async function main() {
  const redis = createRedis(REDIS_URL);
  await redis.set('bench:baseline', 'hello');
  const app = express();
  app.get('/', async (_req, res) => {
    res.json({ value: await redis.get('bench:baseline') });
  });
  listen(app);
}

void main();
