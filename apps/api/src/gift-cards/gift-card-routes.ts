import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { reissueGiftCard } from './reissue-gift-card';
import { idempotencyFor } from '../http/idempotency';
import { bookingIdParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { SellGiftCardRequest } from './gift-card-schemas';
import { sellGiftCard } from './sell-gift-card';

const parseSellGiftCard = createParser(SellGiftCardRequest);

/**
 * Gift card operations with tenant API keys: staff sell cards at the till, managers reissue a
 * booking's paid amount as a new card. Both answer with a code shown once, so both honour
 * Idempotency-Key: a retry after a lost answer gets the same card instead of a second one.
 */
export function giftCardRoutes(router: IRouter, deps: AppDeps): void {
  const staff = requireRole(deps.db, 'staff');
  const manager = requireRole(deps.db, 'manager');
  // Keys are the API key's, not the till's IP: tills share addresses behind a venue's router.
  const byApiKey = (req: Request) => operatorOf(req).keyId;
  const once = idempotencyFor(deps.redis, deps.config);

  router.post('/api/gift-cards/sell', staff, once('gift-card-sale', byApiKey), async (req, res) => {
    res.status(201).json(await sellGiftCard(deps, operatorOf(req), parseSellGiftCard(req.body)));
  });
  router.post('/api/bookings/:id/reissue-gift-card', manager, once('booking-reissue', byApiKey), async (req, res) => {
    res.json(await reissueGiftCard(deps, operatorOf(req), bookingIdParam(req)));
  });
}
