/**
 * The bare hold ceiling: what a hold must do, done the simplest fast way. Express 5, JSON body,
 * express-rate-limit counted in Redis by rate-limit-redis (the API's holds limiter, limit set
 * never to refuse), the Idempotency-Key claimed with SET NX, then one capacity script, loaded
 * once and called by SHA, that adds the hold against a running seat total of the slot
 * (hold-capacity.lua). No PostgreSQL: the slot's capacity is the bench's constant.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRedis } from '@booking/db';
import { CAPACITY, HOLD_TTL_SECONDS, NO_LIMIT_PER_MINUTE, REDIS_URL } from '../lib/env';
import { express, listen, requireAsApi } from './mini-express';

type RateLimit = (options: object) => Parameters<ReturnType<typeof express>['use']>[0];
const { rateLimit } = requireAsApi('express-rate-limit') as { rateLimit: RateLimit };
const { RedisStore } = requireAsApi('rate-limit-redis') as {
  RedisStore: new (options: { prefix: string; sendCommand: (...args: string[]) => Promise<unknown> }) => object;
};

const SCRIPT = readFileSync(path.join(__dirname, 'hold-capacity.lua'), 'utf8');

async function main() {
  const redis = createRedis(REDIS_URL);
  const sha = (await redis.script('LOAD', SCRIPT)) as string;
  const app = express();
  app.use(express.json());
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: NO_LIMIT_PER_MINUTE,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: 'holds',
    store: new RedisStore({
      prefix: 'rl:bench-hold-ceiling:',
      sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args),
    }),
  });
  app.get('/healthz', (_req, res) => res.json({ ok: true }));
  app.post('/api/bookings/hold', limiter, async (req, res) => {
    const body = req.body as { slot_id: string; seats: number };
    const key = req.get('idempotency-key');
    if (key && (await redis.set(`bench:idem:${key}`, 'in_flight', 'EX', 600, 'NX')) !== 'OK') {
      res.status(409).json({ error: 'idempotency_request_in_progress' });
      return;
    }
    const holdId = randomUUID();
    const [placed, expires] = (await redis.evalsha(
      sha,
      3,
      `bench:seats:${body.slot_id}`,
      `bench:holds:${body.slot_id}`,
      `bench:hold:${holdId}`,
      holdId,
      body.seats,
      CAPACITY,
      HOLD_TTL_SECONDS * 1000,
    )) as [number, number];
    if (placed === 0) res.status(409).json({ error: 'insufficient_capacity' });
    else res.status(200).json({ hold_id: holdId, expires_at: new Date(expires).toISOString() });
  });
  listen(app);
}

void main();
