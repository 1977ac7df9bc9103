import express, { type IRouter, type Request } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotencyFor } from '../http/idempotency';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { captureHolderPhoto } from './capture-holder-photo';
import { changeHolder } from './change-holder';
import { assertTenantMembership, loadHolderPhoto } from './get-holder-photo';
import { ChangeHolderRequest } from './holder-schemas';
import { MAX_PHOTO_BYTES, photoBody, photoTypeOf, type PhotoType } from './image-type';

const parseChange = createParser(ChangeHolderRequest);
const membershipId = (req: Request) => idParam(req, 'membership_not_found');
const byApiKey = (req: Request) => operatorOf(req).keyId;

/**
 * The holder of a membership: a manager hands it to another person; staff capture and show the
 * holder's photo. The photo route takes the image itself as its body (JPEG, PNG or WebP up to
 * 2 MB), not JSON: the membership and the Content-Type are checked before the body is read,
 * and the body is read raw by this route alone, so the API's JSON limit stays as it is
 * everywhere else.
 */
export function holderRoutes(router: IRouter, deps: AppDeps): void {
  const staff = requireRole(deps.db, 'staff');
  const manager = requireRole(deps.db, 'manager');
  const once = idempotencyFor(deps.redis, deps.config);

  router.post('/api/v1/memberships/:id/holder', manager, once('membership-holder', byApiKey), async (req, res) => {
    res.json(await changeHolder(deps.db, operatorOf(req), membershipId(req), parseChange(req.body)));
  });

  router.put(
    '/api/v1/memberships/:id/holder-photo',
    staff,
    async (req, res, next) => {
      // Whose membership first: no image is read for a membership that is not the tenant's.
      await assertTenantMembership(deps.db, operatorOf(req).tenantId, membershipId(req));
      res.locals.photoType = photoTypeOf(req.get('Content-Type'));
      next();
    },
    express.raw({ type: () => true, limit: MAX_PHOTO_BYTES }),
    async (req, res) => {
      const contentType = res.locals.photoType as PhotoType;
      const image = photoBody(contentType, req.body);
      res.json(await captureHolderPhoto(deps.db, operatorOf(req), membershipId(req), { contentType, image }));
    },
  );

  router.get('/api/v1/memberships/:id/holder-photo', staff, async (req, res) => {
    const photo = await loadHolderPhoto(deps.db, operatorOf(req).tenantId, membershipId(req));
    res
      .status(200)
      .set({
        'Content-Type': photo.contentType,
        'Cache-Control': 'private, no-store',
        'X-Content-Type-Options': 'nosniff',
      })
      .send(Buffer.from(photo.image));
  });
}
