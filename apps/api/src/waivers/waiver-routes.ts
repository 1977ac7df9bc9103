import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { perIpRateLimit } from '../http/rate-limit';
import { createParser } from '../http/validation';
import { getWaiver } from './get-waiver';
import { signWaiver } from './sign-waiver';
import { SignWaiverRequest } from './waiver-schemas';
import { waiverTokenClaims } from './waiver-token';

/** Signing attempts per minute per IP: enough for a family at one phone, not for guessing. */
export const WAIVER_SIGNS_PER_MINUTE = 30;

const parseSignWaiver = createParser(SignWaiverRequest);
/** The token is checked before anything else: without a genuine one there is nothing to answer. */
const claimsOf = (deps: AppDeps, req: Request) =>
  waiverTokenClaims(deps.config.tokenSigningSecret, String(req.params.token));

/** The guest's waiver, behind the signed token of the booking's waiver_url; no API key. */
export function waiverRoutes(router: IRouter, deps: AppDeps): void {
  router.get('/api/waivers/:token', async (req, res) => {
    res.json(await getWaiver(deps, claimsOf(deps, req)));
  });
  router.post(
    '/api/waivers/:token/sign',
    perIpRateLimit(deps.redis, { name: 'waivers', perMinute: WAIVER_SIGNS_PER_MINUTE }),
    async (req, res) => {
      const claims = claimsOf(deps, req);
      const body = parseSignWaiver(req.body);
      const result = await signWaiver(deps, claims, body, { ip: req.ip, userAgent: req.get('User-Agent') });
      res.status(result.already_signed ? 200 : 201).json(result);
    },
  );
}
