import { createHash, randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  createTestApp,
  keyIdOf,
  seedMembership,
  seedMembershipPlan,
  seedTenant,
  type TestApp,
} from '@booking/test-kit';
import { issueMemberToken } from '../src/memberships/member-token';
import { lockMemberBookingTerms, presentedMembership } from '../src/membership-uses/booking-uses';

// Holders of memberships on the real PostgreSQL and Redis: a manager hands a membership to
// another person (the previous holder's member token stops working), and staff capture and show
// the holder's photo, which events name but never carry.

let t: TestApp;
let demo: DemoTenant;
let other: DemoTenant;

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

beforeAll(async () => {
  t = createTestApp();
  demo = await seedTenant(t.deps);
  other = await seedTenant(t.deps);
});
afterAll(() => t.close());

async function member(
  options: { transferable?: boolean; status?: 'active' | 'expired' | 'frozen' } = {},
  tenant = demo,
) {
  const plan = await seedMembershipPlan(t.deps.db, tenant.tenant.id, { transferable: options.transferable ?? true });
  return seedMembership(t.deps.db, plan, { status: options.status ?? 'active' });
}

const eventsOf = (membershipId: string, name: string) =>
  t.deps.db.event.findMany({ where: { entityId: membershipId, name }, orderBy: { createdAt: 'asc' } });

const changeHolder = (
  membershipId: string,
  body: object,
  key = demo.api_keys.manager,
  headers: Record<string, string> = {},
) => request(t.app).post(`/api/v1/memberships/${membershipId}/holder`).set(auth(key)).set(headers).send(body);

const putPhoto = (membershipId: string, image: Buffer, contentType: string, key = demo.api_keys.staff) =>
  request(t.app)
    .put(`/api/v1/memberships/${membershipId}/holder-photo`)
    .set(auth(key))
    .set('Content-Type', contentType)
    .send(image);

const getPhoto = (membershipId: string, key = demo.api_keys.staff) =>
  request(t.app)
    .get(`/api/v1/memberships/${membershipId}/holder-photo`)
    .set(auth(key))
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('png pixels')]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('jpeg pixels')]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x10, 0, 0, 0]), Buffer.from('WEBPVP8 pixels')]);

/** Whether a member token passes the check a booking makes of it (version and membership). */
async function tokenUsable(token: string): Promise<string> {
  const presented = presentedMembership(t.deps.config, demo.tenant.id, { membership_token: token, guest_count: 1 })!;
  return t.deps.db
    .$transaction((tx) => lockMemberBookingTerms(tx, demo.tenant.id, presented, new Date(Date.now() + 86_400_000)))
    .then(
      () => 'usable',
      (error: { code?: string }) => error.code ?? 'error',
    );
}

describe('changing the holder', () => {
  it('when a manager names a new holder by contact, then the customer is made, the membership is theirs, the old member token stops working, the photo is cleared, and membership.holder_changed is recorded once', async () => {
    const membership = await member();
    const photo = await putPhoto(membership.id, PNG, 'image/png');
    expect(photo.status).toBe(200);
    const oldToken = issueMemberToken(t.deps.config, membership);
    expect(await tokenUsable(oldToken)).toBe('usable');

    const email = `new-holder-${randomUUID()}@example.com`;
    const res = await changeHolder(membership.id, {
      customer: { email, first_name: 'Noa', last_name: 'Lind' },
      reason: 'gift',
    });
    expect(res.status).toBe(200);
    const holder = await t.deps.db.customer.findFirstOrThrow({ where: { tenantId: demo.tenant.id, email } });
    expect(res.body).toMatchObject({
      membership_id: membership.id,
      customer_id: membership.customerId,
      holder_customer_id: holder.id,
      holder_photo_id: null,
    });
    const after = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
    expect(after).toMatchObject({
      holderCustomerId: holder.id,
      tokenVersion: membership.tokenVersion + 1,
      holderPhotoId: null,
    });

    expect(await tokenUsable(oldToken)).toBe('member_token_invalid');
    expect(await tokenUsable(issueMemberToken(t.deps.config, after))).toBe('usable');
    expect((await getPhoto(membership.id)).status).toBe(404);

    const events = await eventsOf(membership.id, 'membership.holder_changed');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      membership_id: membership.id,
      plan_id: membership.planId,
      customer_id: membership.customerId,
      holder_customer_id: holder.id,
      previous_holder_customer_id: membership.holderCustomerId,
      reason: 'gift',
      actor_user_id: await keyIdOf(t, demo.api_keys.manager),
    });
  });

  it('when the new holder is named by customer_id (retried with its Idempotency-Key, then again without), then it changes once; naming the holder again changes nothing', async () => {
    const membership = await member();
    const customer = await t.deps.db.customer.create({
      data: { tenantId: demo.tenant.id, email: `holder-${randomUUID()}@example.com`, firstName: 'Ada' },
    });
    const headers = { 'Idempotency-Key': `holder-${randomUUID()}` };
    const first = await changeHolder(membership.id, { customer_id: customer.id }, demo.api_keys.manager, headers);
    const retried = await changeHolder(membership.id, { customer_id: customer.id }, demo.api_keys.manager, headers);
    const again = await changeHolder(membership.id, { customer_id: customer.id });
    expect([first.status, retried.status, again.status]).toEqual([200, 200, 200]);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(again.body.holder_customer_id).toBe(customer.id);
    const events = await eventsOf(membership.id, 'membership.holder_changed');
    expect(events.map((e) => e.data)).toEqual([
      expect.objectContaining({ holder_customer_id: customer.id, reason: null }),
    ]);
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).tokenVersion).toBe(2);
  });

  it('when the current holder is named by contact with their email in another case, then nothing changes: no second customer, the same token and photo, no event', async () => {
    const email = `sam-${randomUUID()}@example.com`;
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id, { transferable: true });
    const membership = await seedMembership(t.deps.db, plan, { email });
    await putPhoto(membership.id, PNG, 'image/png').expect(200);
    const before = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
    const token = issueMemberToken(t.deps.config, before);

    const res = await changeHolder(membership.id, {
      customer: { email: email.replace('sam', 'Sam').replace('example.com', 'Example.COM'), first_name: 'Member' },
    });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      holder_customer_id: membership.holderCustomerId,
      holder_photo_id: before.holderPhotoId,
    });
    expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).toEqual(before);
    expect(await tokenUsable(token)).toBe('usable');
    const customers = await t.deps.db.customer.findMany({
      where: { tenantId: demo.tenant.id, email: { equals: email, mode: 'insensitive' } },
    });
    expect(customers.map((c) => c.id)).toEqual([membership.holderCustomerId]);
    expect(await eventsOf(membership.id, 'membership.holder_changed')).toEqual([]);
  });

  it('when another existing customer is named with their email in another case, then they become the holder and no customer is made', async () => {
    const membership = await member();
    const email = `ines-${randomUUID()}@example.com`;
    const customer = await t.deps.db.customer.create({ data: { tenantId: demo.tenant.id, email, firstName: 'Ines' } });

    const res = await changeHolder(membership.id, { customer: { email: email.toUpperCase(), first_name: 'Ines' } });

    expect([res.status, res.body.holder_customer_id]).toEqual([200, customer.id]);
    expect(
      await t.deps.db.customer.count({
        where: { tenantId: demo.tenant.id, email: { equals: email, mode: 'insensitive' } },
      }),
    ).toBe(1);
  });

  it('when the current holder is named by contact with another name and phone, then nothing is written: their contact stays and no customer.updated is recorded', async () => {
    const membership = await member();
    const holder = await t.deps.db.customer.findUniqueOrThrow({ where: { id: membership.holderCustomerId } });

    const res = await changeHolder(membership.id, {
      customer: { email: holder.email, first_name: 'Renamed', last_name: 'Person', phone: '+1 555 0199' },
    });

    expect([res.status, res.body.holder_customer_id]).toEqual([200, holder.id]);
    expect(await t.deps.db.customer.findUniqueOrThrow({ where: { id: holder.id } })).toEqual(holder);
    expect(await t.deps.db.event.findMany({ where: { entityId: holder.id, name: 'customer.updated' } })).toEqual([]);
    expect(await eventsOf(membership.id, 'membership.holder_changed')).toEqual([]);
  });

  it('when the plan is not transferable, the membership is over, the customer is unknown or foreign, the body names neither or both, the key is staff, or the membership is another tenant’s, then it is refused with its code and nothing changes', async () => {
    const customer = await t.deps.db.customer.create({
      data: { tenantId: demo.tenant.id, email: `c-${randomUUID()}@example.com`, firstName: 'Cy' },
    });
    const foreignCustomer = await t.deps.db.customer.create({
      data: { tenantId: other.tenant.id, email: `f-${randomUUID()}@example.com`, firstName: 'Fi' },
    });
    const fixed = await member({ transferable: false });
    const expired = await member({ status: 'expired' });
    const active = await member();
    const foreign = await member({}, other);
    const cases: [string, object, number, string, string?][] = [
      [fixed.id, { customer_id: customer.id }, 409, 'membership_not_transferable'],
      [expired.id, { customer_id: customer.id }, 409, 'membership_not_active'],
      [active.id, { customer_id: randomUUID() }, 404, 'customer_not_found'],
      [active.id, { customer_id: foreignCustomer.id }, 404, 'customer_not_found'],
      [active.id, {}, 400, 'invalid_body'],
      [
        active.id,
        { customer_id: customer.id, customer: { email: 'x@example.com', first_name: 'X' } },
        400,
        'invalid_body',
      ],
      [active.id, { customer: { email: 'not-an-email', first_name: 'X' } }, 400, 'invalid_body'],
      [active.id, { customer_id: customer.id }, 403, 'forbidden', demo.api_keys.staff],
      [foreign.id, { customer_id: customer.id }, 404, 'membership_not_found'],
      ['not-a-uuid', { customer_id: customer.id }, 404, 'membership_not_found'],
    ];
    for (const [id, body, status, error, key] of cases) {
      const res = await changeHolder(id, body, key);
      expect({ id, body, status: res.status, error: res.body.error }).toEqual({ id, body, status, error });
    }
    for (const membership of [fixed, expired, active, foreign]) {
      expect(await eventsOf(membership.id, 'membership.holder_changed')).toEqual([]);
      const row = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
      expect(row).toMatchObject({ holderCustomerId: membership.holderCustomerId, tokenVersion: 1 });
    }
  });
});

describe('the holder photo', () => {
  it('when staff send a PNG, then it is stored with its SHA-256 as the current photo, membership.holder_photo_captured names it (no image, no link) once, and GET serves the same bytes', async () => {
    const membership = await member();
    const res = await putPhoto(membership.id, PNG, 'image/png');
    expect(res.status).toBe(200);
    const sha256 = createHash('sha256').update(PNG).digest('hex');
    expect(res.body).toMatchObject({
      membership_id: membership.id,
      holder_customer_id: membership.holderCustomerId,
      content_type: 'image/png',
      size_bytes: PNG.length,
      sha256,
    });
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).holderPhotoId).toBe(
      res.body.photo_id,
    );
    const events = await eventsOf(membership.id, 'membership.holder_photo_captured');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toEqual({
      event_id: events[0]!.id,
      schema_version: 1,
      entity_type: 'membership',
      entity_id: membership.id,
      membership_id: membership.id,
      plan_id: membership.planId,
      customer_id: membership.customerId,
      holder_customer_id: membership.holderCustomerId,
      photo_id: res.body.photo_id,
      captured_at: res.body.captured_at,
      actor_user_id: await keyIdOf(t, demo.api_keys.staff),
    });

    const served = await getPhoto(membership.id);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.headers['cache-control']).toBe('private, no-store');
    expect(Buffer.compare(served.body as Buffer, PNG)).toBe(0);

    // The same photo again is no new capture.
    const again = await putPhoto(membership.id, PNG, 'image/png');
    expect([again.status, again.body.photo_id]).toEqual([200, res.body.photo_id]);
    expect(await eventsOf(membership.id, 'membership.holder_photo_captured')).toHaveLength(1);
  });

  it('when a new JPEG or WebP replaces it, then it is the one served, each capture recorded once', async () => {
    const membership = await member();
    for (const [image, type] of [
      [JPEG, 'image/jpeg'],
      [WEBP, 'image/webp'],
    ] as const) {
      const res = await putPhoto(membership.id, image, type);
      expect(res.status).toBe(200);
      const served = await getPhoto(membership.id);
      expect(served.headers['content-type']).toBe(type);
      expect(Buffer.compare(served.body as Buffer, image)).toBe(0);
    }
    expect(await eventsOf(membership.id, 'membership.holder_photo_captured')).toHaveLength(2);
    expect(await t.deps.db.membershipPhoto.count({ where: { membershipId: membership.id } })).toBe(2);
  });

  it('when the body is not an image of its type, empty, of another type, over 2 MB, the membership is over or not the tenant’s, or there is no photo, then it is refused with its code and nothing is stored', async () => {
    const membership = await member();
    const expired = await member({ status: 'expired' });
    const foreign = await member({}, other);
    const big = Buffer.concat([PNG, Buffer.alloc(2 * 1024 * 1024)]);
    const cases: [string, Buffer, string, number, string][] = [
      [membership.id, JPEG, 'image/png', 400, 'invalid_body'],
      [membership.id, Buffer.from('GIF89a...'), 'image/webp', 400, 'invalid_body'],
      [membership.id, Buffer.alloc(0), 'image/png', 400, 'invalid_body'],
      [membership.id, PNG, 'image/gif', 415, 'unsupported_media_type'],
      [membership.id, PNG, 'application/octet-stream', 415, 'unsupported_media_type'],
      [membership.id, big, 'image/png', 413, 'payload_too_large'],
      [expired.id, PNG, 'image/png', 409, 'membership_not_active'],
      [foreign.id, PNG, 'image/png', 404, 'membership_not_found'],
    ];
    for (const [id, image, type, status, error] of cases) {
      const res = await putPhoto(id, image, type);
      expect({ type, size: image.length, status: res.status, error: res.body.error }).toEqual({
        type,
        size: image.length,
        status,
        error,
      });
    }
    const json = await request(t.app)
      .put(`/api/v1/memberships/${membership.id}/holder-photo`)
      .set(auth(demo.api_keys.staff))
      .send({ image: 'base64' });
    expect([json.status, json.body.error]).toEqual([415, 'unsupported_media_type']);
    const noKey = await request(t.app)
      .put(`/api/v1/memberships/${membership.id}/holder-photo`)
      .set('Content-Type', 'image/png')
      .send(PNG);
    expect(noKey.status).toBe(401);
    expect(
      await t.deps.db.membershipPhoto.count({
        where: { membershipId: { in: [membership.id, expired.id, foreign.id] } },
      }),
    ).toBe(0);

    const none = await getPhoto(membership.id);
    expect([none.status, JSON.parse((none.body as Buffer).toString()).error]).toEqual([404, 'photo_not_found']);
    const foreignRead = await getPhoto(foreign.id);
    expect([foreignRead.status, JSON.parse((foreignRead.body as Buffer).toString()).error]).toEqual([
      404,
      'membership_not_found',
    ]);
  });
});
