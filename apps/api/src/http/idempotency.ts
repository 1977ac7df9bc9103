import { createHash, createHmac, randomUUID } from 'node:crypto';
import { redisScript } from '@booking/db';
import { AppError } from '@booking/domain';
import { openSecret, sealSecret } from '@booking/signing';
import type { Request, RequestHandler, Response } from 'express';
import type { Cluster, Redis } from 'ioredis';
import { countReplay } from './counters';
import { answeredStatus, timedOut } from './request-deadline';
import { routeLabel } from './route-label';

type StoredRecord =
  | { state: 'in_flight'; fingerprint: string }
  | { state: 'rebuild'; fingerprint: string; run: string }
  | { state: 'done'; fingerprint: string; status: number; sealed: string };

/**
 * For `rebuildsAnswers`: claims the key for this run (answers 1), or takes it over from an earlier
 * run of the same request that stored no answer (answers 0), and the route runs; otherwise answers
 * the record (a stored answer, or another request's). The run that claimed last owns the record. A
 * key taken over keeps its lifetime, but lives at least as long as a run may work, so that no
 * later run finds it free (and keeps a refusal) while this one may still do the work.
 * KEYS: the record. ARGV: this run's claim, its lifetime in seconds, the request's fingerprint, the
 * longest a run may work in seconds.
 */
const CLAIM_RUN = `
local stored = redis.call('GET', KEYS[1])
if not stored then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return 1
end
local record = cjson.decode(stored)
if record.state ~= 'rebuild' or record.fingerprint ~= ARGV[3] then return stored end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
if redis.call('TTL', KEYS[1]) < tonumber(ARGV[4]) then redis.call('EXPIRE', KEYS[1], ARGV[4]) end
return 0
`;

/**
 * Stores a run's answer only while the run still owns the record: once a later run of the same
 * request took it over, that run may do the work (place the hold), and a retry must find it.
 * KEYS: the record. ARGV: the run's claim, the answer's record, its lifetime in seconds.
 */
const STORE_IF_OWNER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) end
return 1
`;

export const MAX_KEY_LENGTH = 255;
export const KEY_FORMAT = /^[\x21-\x7e]+$/;

/** Headers that carry who is asking: a stored answer belongs to those credentials only. */
const CREDENTIAL_HEADERS = ['authorization', 'x-booking-token', 'x-manage-token', 'x-membership-token'] as const;

export interface IdempotencyOptions {
  /** Names the route: the same key on two routes is two requests. */
  scope: string;
  /** How long a finished answer is kept for retries. */
  ttlSeconds: number;
  /**
   * How long a claimed key stays "in progress" if its request never answers (the process died).
   * Must outlast the longest a request's work can run, or a retry could do it a second time.
   */
  inFlightSeconds: number;
  /** Server secret that derives the record's name, the answer's sealing key and `idempotencyRef`. */
  secret: string;
  /** Who the key belongs to; the client IP unless the route knows better (an API key). */
  clientOf?: (req: Request) => string;
  /**
   * The route's work, run again with the same `idempotencyRef`, finds itself done and answers as
   * the first run did, without doing it twice (a hold: its id is derived from the ref, and placing
   * it again finds it), for at least `forSeconds`. Its 2xx answers are then not stored: the claim,
   * kept for `ttlSeconds` (at most `forSeconds`, at least `inFlightSeconds`, which must be shorter),
   * says "run it again", and a retry, even one that arrives while the first run is still working,
   * takes the key over, runs the route and gets the work's answer. A 4xx answer is stored only by
   * a run that claimed a free key and still owns it: the run it was taken from, or a run it took
   * over from that is still working, may yet do the work. This saves the hottest route a Redis
   * write on every request.
   */
  rebuildsAnswers?: { forSeconds: number };
}

function fingerprintOf(req: Request): string {
  const raw = (req as Request & { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);
  return createHash('sha256').update(`${req.method} ${req.originalUrl}\n`).update(raw).digest('hex');
}

function credentialsOf(req: Request): string {
  return CREDENTIAL_HEADERS.map((name) => req.get(name) ?? '').join('\n');
}

/**
 * Idempotency-Key, after the IETF draft and Stripe: the first request with a key does the work
 * and its answer (status and body) is kept for `ttlSeconds`; a retry with the same key and
 * body gets that answer again (with `Idempotent-Replayed: true`) without repeating the work;
 * the same key with another body is 422 `idempotency_key_reused`; a retry while the first is
 * still running is 409 `idempotency_request_in_progress`. 5xx answers are not kept, so the
 * client can retry them. Without the header the request is simply not deduplicated. A route whose
 * work answers a retry by itself keeps only its 4xx answers (see `rebuildsAnswers`).
 *
 * A key belongs to the route, the client and the credentials sent with it: another caller
 * using the same key (or the same caller with another token) never sees the answer, and the
 * route's own authentication runs before this middleware. Answers can hold bearer secrets (a
 * sold gift card's code, a payment's client secret), so they are stored sealed with a key
 * derived from the client's Idempotency-Key, which the server never stores: a Redis dump
 * alone reads none of them.
 *
 * Redis only remembers answers. Work that commits and whose answer is then lost (the process
 * died between the two) is found again by the use case through `idempotencyRef`, which it
 * records with the work in PostgreSQL.
 */
export function idempotent(redis: Redis | Cluster, options: IdempotencyOptions): RequestHandler {
  const claimRun = redisScript(redis, 'idempotencyClaimRun', CLAIM_RUN, 1);
  const storeIfOwner = redisScript(redis, 'idempotencyStoreIfOwner', STORE_IF_OWNER, 1);
  return async (req, res, next) => {
    const key = req.get('Idempotency-Key');
    if (key === undefined) return next();
    if (key.length === 0 || key.length > MAX_KEY_LENGTH || !KEY_FORMAT.test(key)) {
      throw new AppError(
        'invalid_idempotency_key',
        `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters`,
      );
    }
    const client = options.clientOf?.(req) ?? req.ip ?? 'unknown';
    const owner = `${options.scope}\n${client}\n${credentialsOf(req)}\n${key}`;
    const derive = (purpose: string) => createHmac('sha256', options.secret).update(`${purpose}\n${owner}`);
    // Records of rebuilt answers have names of their own: a replica of a release before them
    // (during a rolling deploy) would misread one as a stored answer, and without it runs the
    // route, which finds its work.
    const kind = options.rebuildsAnswers ? 'rebuilt:' : '';
    const redisKey = `idem:${options.scope}:${kind}${derive('record').digest('hex')}`;
    // Derived only to store or replay an answer: a hold's usual answer is neither.
    const sealKey = () => derive('seal').digest('base64url');
    const fingerprint = fingerprintOf(req);

    let claim: string;
    let tookOver = false;
    let keySeconds = options.ttlSeconds;
    if (options.rebuildsAnswers) {
      const record: StoredRecord = { state: 'rebuild', fingerprint, run: randomUUID() };
      claim = JSON.stringify(record);
      // Long enough for the run to end; no longer than the work can be found.
      keySeconds = Math.max(options.inFlightSeconds, Math.min(options.ttlSeconds, options.rebuildsAnswers.forSeconds));
      // A free key, as it nearly always is, is claimed by a plain SET NX; a retry's by the script.
      if ((await redis.set(redisKey, claim, 'EX', keySeconds, 'NX')) !== 'OK') {
        const claimed = (await claimRun([redisKey], [claim, keySeconds, fingerprint, options.inFlightSeconds])) as
          number | string;
        if (typeof claimed === 'string') return replay(res, storedRecord(claimed, fingerprint), sealKey());
        tookOver = claimed === 0;
      }
    } else {
      claim = JSON.stringify({ state: 'in_flight', fingerprint });
      const claimed = await redis.set(redisKey, claim, 'EX', options.inFlightSeconds, 'NX');
      if (claimed !== 'OK') return replay(res, storedRecord(await redis.get(redisKey), fingerprint), sealKey());
    }

    res.locals.idempotencyRef = derive(`ref\n${fingerprint}`).digest('hex');
    captureResponse(res, async (status, body) => {
      // Its claim already says how to answer a retry: run the route again.
      if (options.rebuildsAnswers && (status < 300 || status >= 500)) return;
      if (status >= 500) {
        // A request that ran past its deadline may still be working: its key stays in flight
        // until the work answers (and is stored below) or the in-flight time runs out.
        if (!timedOut(res)) await redis.del(redisKey);
        return;
      }
      const record: StoredRecord = {
        state: 'done',
        fingerprint,
        status,
        sealed: sealSecret(sealKey(), JSON.stringify(body)),
      };
      if (!options.rebuildsAnswers) await redis.set(redisKey, JSON.stringify(record), 'EX', options.ttlSeconds);
      else if (!tookOver) await storeIfOwner([redisKey], [claim, JSON.stringify(record), keySeconds]);
    });
    next();
  };
}

/**
 * Names this request's work durably: the same value for every retry with the same key, client,
 * credentials and body, and unguessable without the server's secret. Undefined without a key.
 */
export function idempotencyRef(res: Response): string | undefined {
  return res.locals.idempotencyRef as string | undefined;
}

/** Marks an answer rebuilt from committed work as a replay, as a stored one would be. */
export function markReplayed(res: Response): void {
  res.setHeader('Idempotent-Replayed', 'true');
  countReplay(routeLabel(res.req));
}

/** The record of a key already claimed, if this request may use it: the same request, not a conflict. */
function storedRecord(stored: string | null, fingerprint: string): Extract<StoredRecord, { state: 'done' }> {
  // Expired between our SET NX and GET: rare, and a conflict is a safe answer to retry.
  if (stored === null) throw new AppError('idempotency_request_in_progress');
  const record = JSON.parse(stored) as StoredRecord;
  if (record.fingerprint !== fingerprint) {
    throw new AppError('idempotency_key_reused', 'this Idempotency-Key was used with a different request');
  }
  // A rebuilt answer's record is answered only by CLAIM_RUN, which runs the route instead.
  if (record.state !== 'done') throw new AppError('idempotency_request_in_progress');
  return record;
}

function replay(res: Response, record: Extract<StoredRecord, { state: 'done' }>, sealKey: string): void {
  markReplayed(res);
  const body = JSON.parse(openSecret(sealKey, record.sealed)) as { error?: unknown };
  // A stored refusal is logged with its code, as it was the first time (see the error handler).
  if (record.status >= 400 && typeof body.error === 'string') res.locals.errorCode = body.error;
  res.status(record.status).json(body);
}

/**
 * Holds back the JSON response until it is stored, so a retry that arrives right after the
 * answer always finds it. When the request deadline already answered 503, the late answer is
 * still stored (for the retry) but not sent.
 */
function captureResponse(res: Response, store: (status: number, body: unknown) => Promise<void>): void {
  const send = res.json.bind(res);
  res.json = (body: unknown) => {
    store(answeredStatus(res), body)
      .catch((error: unknown) => res.req.log.warn({ err: error }, 'could not store idempotent response'))
      .finally(() => {
        if (!res.headersSent) send(body);
      });
    return res;
  };
}

/**
 * The routes' way to ask for idempotency: `once('scope')`, or `once('scope', byApiKey)` where
 * callers are better told apart by their API key than by their address.
 */
export function idempotencyFor(
  redis: Redis | Cluster,
  config: { idempotencyTtlSeconds: number; idempotencyInFlightSeconds: number; tokenSigningSecret: string },
): (
  scope: string,
  clientOf?: (req: Request) => string,
  answers?: Pick<IdempotencyOptions, 'rebuildsAnswers'>,
) => RequestHandler {
  return (scope, clientOf, answers) =>
    idempotent(redis, {
      scope,
      clientOf,
      ...answers,
      ttlSeconds: config.idempotencyTtlSeconds,
      inFlightSeconds: config.idempotencyInFlightSeconds,
      secret: config.tokenSigningSecret,
    });
}
