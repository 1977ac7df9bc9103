import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import pino from 'pino';
import { loadConfig } from '@booking/config';
import type { DemoTenant } from '@booking/db';
import { EVENT_SCHEMA_VERSIONS } from '@booking/events';
import { signToken } from '@booking/signing';
import { createApp } from '../src/app';
import { closeAppDeps, createAppDeps } from '../src/app-deps';
import { evidenceHash } from '../src/waivers/sign-waiver';
import { WAIVER_TEXT, WAIVER_VERSION } from '../src/waivers/waiver-text';
import {
  clientIp,
  confirmedBooking,
  createBooking,
  createTestApp,
  type Experience,
  seedTenant,
  type TestApp,
  waitUntil,
} from '@booking/test-kit';

interface MadeBooking {
  bookingId: string;
  slotId: string;
  waiverUrl: string | null;
  bookingToken: string;
  email: string;
}

describe('waivers', () => {
  let t: TestApp;
  let demo: DemoTenant;
  let other: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    [demo, other] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
  });
  afterAll(() => t.close());

  const kayak = (tenant: DemoTenant) => tenant.experiences.find((e) => e.requires_waiver)!;
  const escapeRoom = (tenant: DemoTenant) => tenant.experiences.find((e) => !e.requires_waiver)!;

  /** A booking of the given experience's second slot; `confirmed` pays it with the seed's big gift card. */
  async function makeBooking(
    tenant: DemoTenant,
    options: { experience?: Experience; guests?: number; confirmed?: boolean } = {},
  ): Promise<MadeBooking> {
    const { confirmed, ...choices } = options;
    const booked = await (confirmed ? confirmedBooking : createBooking)(t, tenant, {
      experience: kayak(tenant),
      slotIndex: 1,
      ...choices,
    });
    return {
      bookingId: booked.booking_id,
      slotId: booked.slotId,
      waiverUrl: booked.waiver_url,
      bookingToken: booked.booking_token,
      email: booked.email,
    };
  }

  const tokenOf = (waiverUrl: string | null) => {
    const match = /\/api\/waivers\/([^/?#]+)$/.exec(waiverUrl ?? '');
    if (!match) throw new Error(`not a waiver url: ${waiverUrl}`);
    return match[1]!;
  };
  const waiverToken = (bookingId: string, tenantId: string, options: { ttlSeconds?: number; now?: Date } = {}) =>
    signToken(t.deps.config.tokenSigningSecret, 'waiver', {
      subject: bookingId,
      tenantId,
      ttlSeconds: options.ttlSeconds ?? 3600,
      now: options.now,
    });

  const getWaiver = (token: string) => request(t.app).get(`/api/waivers/${token}`);
  const sign = (token: string, body: object, ip: string) =>
    request(t.app)
      .post(`/api/waivers/${token}/sign`)
      .set('X-Forwarded-For', ip)
      .set('User-Agent', 'waiver-test/1.0')
      .send(body);
  const signBody = (participant: string, extra: object = {}) => ({
    signer_name: 'Grace Hopper',
    participant_name: participant,
    consent: true,
    waiver_version: WAIVER_VERSION,
    ...extra,
  });
  const waiverEvents = (bookingId: string) =>
    t.deps.db.event.findMany({ where: { entityId: bookingId, name: 'waiver.signed' }, orderBy: { createdAt: 'asc' } });
  const signatures = (bookingId: string) =>
    t.deps.db.waiverSignature.findMany({ where: { bookingId }, orderBy: { signedAt: 'asc' } });

  describe('GET /api/waivers/{token}', () => {
    it("when a guest opens a booking's waiver_url, then the visit, the current waiver and the signatures so far are shown", async () => {
      const booking = await makeBooking(demo, { guests: 3 });
      const token = tokenOf(booking.waiverUrl);
      expect(booking.waiverUrl).toBe(`${t.deps.config.publicBaseUrl}/api/waivers/${token}`);
      const experience = await t.deps.db.experience.findUniqueOrThrow({ where: { id: kayak(demo).id } });
      const slot = await t.deps.db.slot.findUniqueOrThrow({ where: { id: booking.slotId } });

      const before = await getWaiver(token);
      const signed = await sign(token, signBody('Ada Lovelace'), clientIp());
      const after = await getWaiver(token);

      expect(before.status).toBe(200);
      expect(before.body).toEqual({
        booking_id: booking.bookingId,
        experience: { name: experience.name },
        slot: { starts_at: slot.startsAt.toISOString() },
        guest_count: 3,
        waiver: { version: WAIVER_VERSION, text: WAIVER_TEXT },
        signatures: [],
      });
      expect(signed.status).toBe(201);
      expect(after.status).toBe(200);
      expect(after.body.signatures).toEqual([{ participant_name: 'Ada Lovelace', signed_at: signed.body.signed_at }]);
    });

    it('when the experience requires no waiver, then 409 waiver_not_required', async () => {
      const booking = await makeBooking(demo, { experience: escapeRoom(demo) });
      expect(booking.waiverUrl).toBeNull();

      const res = await getWaiver(waiverToken(booking.bookingId, demo.tenant.id));

      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'waiver_not_required' });
    });

    it('when the token is tampered with, made for another purpose or expired, then 401 invalid_token or token_expired', async () => {
      const booking = await makeBooking(demo);
      const token = tokenOf(booking.waiverUrl);
      const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
      const expired = waiverToken(booking.bookingId, demo.tenant.id, {
        ttlSeconds: 60,
        now: new Date(Date.now() - 3600_000),
      });

      const results = await Promise.all([
        getWaiver(tampered),
        getWaiver(booking.bookingToken),
        getWaiver('not-a-token'),
        getWaiver(expired),
      ]);

      expect(results.map((r) => [r.status, r.body.error])).toEqual([
        [401, 'invalid_token'],
        [401, 'invalid_token'],
        [401, 'invalid_token'],
        [401, 'token_expired'],
      ]);
    });

    it("when the token names no booking of its tenant (unknown, or another tenant's), then 404 waiver_not_found", async () => {
      const booking = await makeBooking(other);

      const unknown = await getWaiver(waiverToken(randomUUID(), demo.tenant.id));
      const crossTenant = await getWaiver(waiverToken(booking.bookingId, demo.tenant.id));

      expect([unknown.status, unknown.body]).toEqual([404, { error: 'waiver_not_found' }]);
      expect([crossTenant.status, crossTenant.body]).toEqual([404, { error: 'waiver_not_found' }]);
    });

    it('when the booking was cancelled, then its waiver is 409 booking_not_amendable for reading and signing', async () => {
      const booking = await makeBooking(demo, { confirmed: true });
      const token = tokenOf(booking.waiverUrl);
      const cancelled = await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/cancel`)
        .set('Authorization', `Bearer ${demo.api_keys.manager}`);
      expect(cancelled.status).toBe(200);

      const read = await getWaiver(token);
      const signed = await sign(token, signBody('Ada'), clientIp());

      expect([read.status, read.body.error]).toEqual([409, 'booking_not_amendable']);
      expect([signed.status, signed.body.error]).toEqual([409, 'booking_not_amendable']);
      expect(await signatures(booking.bookingId)).toHaveLength(0);
    });
  });

  describe('a waiver link follows its booking', () => {
    const moveSlot = (slotId: string, endsAt: Date) =>
      t.deps.db.slot.update({
        where: { id: slotId },
        data: { startsAt: new Date(endsAt.getTime() - 3600_000), endsAt },
      });
    const twoDaysAgo = () => new Date(Date.now() - 2 * 86_400_000);

    it('when the visit ended more than a day ago, then the link is 401 token_expired, whenever the link was issued', async () => {
      const own = await seedTenant(t.deps);
      const booking = await makeBooking(own, { confirmed: true });
      const token = tokenOf(booking.waiverUrl);
      await moveSlot(booking.slotId, twoDaysAgo());

      const read = await getWaiver(token);
      const signed = await sign(token, signBody('Ada'), clientIp());

      expect([read.status, read.body.error]).toEqual([401, 'token_expired']);
      expect([signed.status, signed.body.error]).toEqual([401, 'token_expired']);
      expect(await signatures(booking.bookingId)).toHaveLength(0);
    });

    it('when the booking was moved to a later slot, then the link it was sent with works until a day after the new visit', async () => {
      const own = await seedTenant(t.deps);
      const booking = await makeBooking(own, { confirmed: true });
      const token = tokenOf(booking.waiverUrl);
      const later = kayak(own).slots[3]!.id;
      const moved = await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/reschedule`)
        .set('Authorization', `Bearer ${own.api_keys.manager}`)
        .send({ slot_id: later });
      expect(moved.status).toBe(200);
      // The slot the link was issued for is long over; the booking's visit is not.
      await moveSlot(booking.slotId, twoDaysAgo());

      expect((await getWaiver(token)).status).toBe(200);
      expect((await sign(token, signBody('Ada'), clientIp())).status).toBe(201);
    });

    it("when the booking was transferred, then the old customer's link is 401 invalid_token and the one in the transfer's answer works", async () => {
      const own = await seedTenant(t.deps);
      const booking = await makeBooking(own, { confirmed: true });
      const oldToken = tokenOf(booking.waiverUrl);
      const moved = await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/transfer`)
        .set('Authorization', `Bearer ${own.api_keys.manager}`)
        .send({ customer: { email: `new-owner-${randomUUID()}@example.com`, first_name: 'Nia' }, reason: 'gift' });
      expect(moved.status).toBe(200);
      const newToken = tokenOf(moved.body.waiver_url as string);

      const oldRead = await getWaiver(oldToken);
      const oldSign = await sign(oldToken, signBody('Ada'), clientIp());

      expect([oldRead.status, oldRead.body.error]).toEqual([401, 'invalid_token']);
      expect([oldSign.status, oldSign.body.error]).toEqual([401, 'invalid_token']);
      expect((await getWaiver(newToken)).status).toBe(200);
      expect((await sign(newToken, signBody('Nia'), clientIp())).status).toBe(201);
      expect((await signatures(booking.bookingId)).map((s) => s.participantName)).toEqual(['Nia']);
    });
  });

  describe("a transfer supersedes the previous party's signatures", () => {
    const transfer = (tenant: DemoTenant, bookingId: string, email: string) =>
      request(t.app)
        .post(`/api/bookings/${bookingId}/transfer`)
        .set('Authorization', `Bearer ${tenant.api_keys.manager}`)
        .send({ customer: { email, first_name: 'Carol' }, reason: 'gift' });
    const transfers = (bookingId: string) =>
      t.deps.db.bookingAmendment.findMany({ where: { bookingId, kind: 'transfer' }, orderBy: { createdAt: 'asc' } });
    const newEmail = () => `carol-${randomUUID()}@example.com`;

    it('when a booking whose guests signed is transferred, then the new party sees none of their names and signs for every guest, and the old signatures stay marked with the transfer', async () => {
      const own = await seedTenant(t.deps);
      const booking = await makeBooking(own, { confirmed: true, guests: 2 });
      const oldToken = tokenOf(booking.waiverUrl);
      const ip = clientIp();
      expect((await sign(oldToken, signBody('Alice Archer'), ip)).status).toBe(201);
      expect((await sign(oldToken, signBody('Bob Brown'), ip)).status).toBe(201);

      const moved = await transfer(own, booking.bookingId, newEmail());
      expect(moved.status).toBe(200);
      const token = tokenOf(moved.body.waiver_url as string);
      const view = await getWaiver(token);
      const carol = await sign(token, signBody('Carol Cole'), ip);
      // A name the previous party signed for is a new participant of this party.
      const bob = await sign(token, signBody('bob brown'), ip);
      const third = await sign(token, signBody('Dan Dale'), ip);

      expect(view.status).toBe(200);
      expect(view.body.signatures).toEqual([]);
      expect(JSON.stringify(view.body)).not.toMatch(/Alice|Bob/);
      expect([carol.status, bob.status]).toEqual([201, 201]);
      expect(bob.body.already_signed).toBe(false);
      expect([third.status, third.body]).toEqual([
        409,
        { error: 'waiver_signatures_complete', detail: { guest_count: 2 } },
      ]);
      expect(
        (await getWaiver(token)).body.signatures.map((s: { participant_name: string }) => s.participant_name),
      ).toEqual(['Carol Cole', 'bob brown']);
      const [amendment] = await transfers(booking.bookingId);
      const rows = await signatures(booking.bookingId);
      expect(rows.map((r) => [r.participantName, r.supersededAt, r.supersededByAmendmentId])).toEqual([
        ['Alice Archer', amendment!.createdAt, amendment!.id],
        ['Bob Brown', amendment!.createdAt, amendment!.id],
        ['Carol Cole', null, null],
        ['bob brown', null, null],
      ]);
      expect(await waiverEvents(booking.bookingId)).toHaveLength(4);
    });

    it('when a booking is transferred, then a link that names no customer (issued before links did) stops working, and works until then', async () => {
      const own = await seedTenant(t.deps);
      const booking = await makeBooking(own, { confirmed: true, guests: 2 });
      const legacy = waiverToken(booking.bookingId, own.tenant.id);
      const ip = clientIp();
      expect((await sign(legacy, signBody('Alice Archer'), ip)).status).toBe(201);

      expect((await transfer(own, booking.bookingId, newEmail())).status).toBe(200);
      const view = await getWaiver(legacy);
      const signed = await sign(legacy, signBody('Eve Early'), ip);

      expect([view.status, view.body.error]).toEqual([401, 'invalid_token']);
      expect([signed.status, signed.body.error]).toEqual([401, 'invalid_token']);
      expect((await signatures(booking.bookingId)).map((r) => [r.participantName, r.supersededAt !== null])).toEqual([
        ['Alice Archer', true],
      ]);
    });

    it('when the booking is transferred back, then its first customer sees none of their old signatures and their guests sign again', async () => {
      const own = await seedTenant(t.deps);
      const booking = await makeBooking(own, { confirmed: true, guests: 1 });
      const ip = clientIp();
      const first = await sign(tokenOf(booking.waiverUrl), signBody('Alice Archer'), ip);
      expect(first.status).toBe(201);
      expect((await transfer(own, booking.bookingId, newEmail())).status).toBe(200);

      const back = await transfer(own, booking.bookingId, booking.email);
      expect(back.status).toBe(200);
      const token = tokenOf(back.body.waiver_url as string);
      const view = await getWaiver(token);
      const again = await sign(token, signBody('Alice Archer'), ip);

      expect(view.body.signatures).toEqual([]);
      expect(again.status).toBe(201);
      expect(again.body.waiver_id).not.toBe(first.body.waiver_id);
      const [away] = await transfers(booking.bookingId);
      expect(
        (await signatures(booking.bookingId)).map((r) => [r.id, r.supersededByAmendmentId, r.supersededAt]),
      ).toEqual([
        [first.body.waiver_id, away!.id, away!.createdAt],
        [again.body.waiver_id, null, null],
      ]);
    });

    it('when signatures race a transfer, then each one lands before it and is superseded, or after it and is refused', async () => {
      const own = await seedTenant(t.deps);
      const booking = await makeBooking(own, { confirmed: true, guests: 4 });
      const oldToken = tokenOf(booking.waiverUrl);
      const ip = clientIp();
      expect((await sign(oldToken, signBody('Ann'), ip)).status).toBe(201);

      const [moved, ...signed] = await Promise.all([
        transfer(own, booking.bookingId, newEmail()),
        ...['Ben', 'Cid', 'Dee'].map((name) => sign(oldToken, signBody(name), ip)),
      ]);

      expect(moved!.status).toBe(200);
      for (const res of signed) expect([201, 401]).toContain(res.status);
      const rows = await signatures(booking.bookingId);
      expect(rows).toHaveLength(1 + signed.filter((res) => res.status === 201).length);
      expect(rows.every((row) => row.supersededAt !== null)).toBe(true);
      const token = tokenOf(moved!.body.waiver_url as string);
      expect((await getWaiver(token)).body.signatures).toEqual([]);
      const fresh = await Promise.all(['Ann', 'Ben', 'Cid', 'Dee'].map((name) => sign(token, signBody(name), ip)));
      expect(fresh.map((res) => res.status)).toEqual([201, 201, 201, 201]);
    });
  });

  describe('POST /api/waivers/{token}/sign', () => {
    it('when a participant signs, then 201, the evidence is stored and waiver.signed carries only identifiers; signing again is 200 with the same signature and no new event', async () => {
      const booking = await makeBooking(demo, { guests: 2 });
      const token = tokenOf(booking.waiverUrl);
      const ip = clientIp();

      const first = await sign(token, signBody('  Ada Lovelace '), ip);
      const again = await sign(token, signBody('ada lovelace', { signer_name: 'Someone Else' }), ip);

      expect(first.status).toBe(201);
      const rows = await signatures(booking.bookingId);
      expect(rows).toHaveLength(1);
      const row = rows[0]!;
      expect(first.body).toEqual({
        waiver_id: row.id,
        booking_id: booking.bookingId,
        participant_name: 'Ada Lovelace',
        waiver_version: WAIVER_VERSION,
        signed_at: row.signedAt.toISOString(),
        evidence_hash: row.evidenceHash,
        already_signed: false,
      });
      expect(row).toMatchObject({
        tenantId: demo.tenant.id,
        participantKey: 'ada lovelace',
        participantName: 'Ada Lovelace',
        signerName: 'Grace Hopper',
        waiverVersion: WAIVER_VERSION,
        ipAddress: ip,
        userAgent: 'waiver-test/1.0',
      });
      expect(row.evidenceHash).toBe(
        evidenceHash({
          bookingId: booking.bookingId,
          participantName: 'Ada Lovelace',
          signerName: 'Grace Hopper',
          signedAt: row.signedAt,
        }),
      );
      expect(row.evidenceHash).toMatch(/^[0-9a-f]{64}$/);

      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ...first.body, already_signed: true });

      const events = await waiverEvents(booking.bookingId);
      expect(events).toHaveLength(1);
      expect(events[0]!.tenantId).toBe(demo.tenant.id);
      expect(events[0]!.schemaVersion).toBe(2);
      expect(events[0]!.data).toEqual({
        event_id: events[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['waiver.signed'],
        entity_type: 'booking',
        entity_id: booking.bookingId,
        waiver_id: row.id,
        booking_id: booking.bookingId,
      });
      const text = JSON.stringify(events[0]!.data);
      // Whole words: a uuid's hex can contain "ada".
      expect(text).not.toMatch(/\b(Ada|Grace|Hopper|Lovelace)\b/);
      expect(text).not.toContain(token);
    });

    it('when the same participant signs several times at once, then one signature and one event result', async () => {
      const booking = await makeBooking(demo, { guests: 4 });
      const token = tokenOf(booking.waiverUrl);
      const ip = clientIp();

      const results = await Promise.all(Array.from({ length: 5 }, () => sign(token, signBody('Alan Turing'), ip)));

      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
      expect(new Set(results.map((r) => r.body.waiver_id)).size).toBe(1);
      expect(await signatures(booking.bookingId)).toHaveLength(1);
      expect(await waiverEvents(booking.bookingId)).toHaveLength(1);
    });

    it('when every guest has signed, then another participant is 409 waiver_signatures_complete, even when they race', async () => {
      const booking = await makeBooking(demo, { guests: 2 });
      const token = tokenOf(booking.waiverUrl);
      const ip = clientIp();

      const results = await Promise.all(['Ann', 'Bob', 'Cat'].map((name) => sign(token, signBody(name), ip)));
      const late = await sign(token, signBody('Dan'), ip);
      const repeat = await sign(token, signBody(results.find((r) => r.status === 201)!.body.participant_name), ip);

      expect(results.map((r) => r.status).sort()).toEqual([201, 201, 409]);
      expect(results.find((r) => r.status === 409)!.body).toEqual({
        error: 'waiver_signatures_complete',
        detail: { guest_count: 2 },
      });
      expect([late.status, late.body.error]).toEqual([409, 'waiver_signatures_complete']);
      // A participant who has signed may still get their signature back.
      expect(repeat.status).toBe(200);
      expect(await signatures(booking.bookingId)).toHaveLength(2);
      expect(await waiverEvents(booking.bookingId)).toHaveLength(2);
    });

    it('when consent is not literally true or a field is missing, empty or unknown, then 400 invalid_body and nothing is stored', async () => {
      const booking = await makeBooking(demo);
      const token = tokenOf(booking.waiverUrl);
      const ip = clientIp();

      const results = await Promise.all([
        sign(token, signBody('Ada', { consent: false }), ip),
        sign(token, signBody('Ada', { consent: 'true' }), ip),
        sign(token, { signer_name: 'Grace', participant_name: 'Ada', waiver_version: WAIVER_VERSION }, ip),
        sign(token, signBody('   '), ip),
        sign(token, signBody('x'.repeat(201)), ip),
        sign(token, signBody('Ada', { signer_name: '' }), ip),
        sign(token, signBody('Ada', { signature_png: 'abc' }), ip),
      ]);

      for (const res of results) {
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_body');
      }
      expect(results[0]!.body.detail).toEqual([expect.objectContaining({ field: '/consent' })]);
      expect(await signatures(booking.bookingId)).toHaveLength(0);
      expect(await waiverEvents(booking.bookingId)).toHaveLength(0);
    });

    it('when the signer was shown another waiver version, then 409 waiver_version_outdated names the current one', async () => {
      const booking = await makeBooking(demo);
      const token = tokenOf(booking.waiverUrl);

      const res = await sign(token, signBody('Ada', { waiver_version: 'v0' }), clientIp());

      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'waiver_version_outdated', detail: { current_version: WAIVER_VERSION } });
      expect(await signatures(booking.bookingId)).toHaveLength(0);
    });

    it('when the token is bad or expired, or the experience needs no waiver, then nothing is signed', async () => {
      const booking = await makeBooking(demo);
      const noWaiver = await makeBooking(demo, { experience: escapeRoom(demo) });
      const ip = clientIp();
      const expired = waiverToken(booking.bookingId, demo.tenant.id, {
        ttlSeconds: 60,
        now: new Date(Date.now() - 3600_000),
      });

      const bad = await sign(booking.bookingToken, signBody('Ada'), ip);
      const late = await sign(expired, signBody('Ada'), ip);
      const unneeded = await sign(waiverToken(noWaiver.bookingId, demo.tenant.id), signBody('Ada'), ip);
      const crossTenant = await sign(waiverToken(booking.bookingId, other.tenant.id), signBody('Ada'), ip);

      expect([bad.status, bad.body.error]).toEqual([401, 'invalid_token']);
      expect([late.status, late.body.error]).toEqual([401, 'token_expired']);
      expect([unneeded.status, unneeded.body.error]).toEqual([409, 'waiver_not_required']);
      expect([crossTenant.status, crossTenant.body.error]).toEqual([404, 'waiver_not_found']);
      expect(await signatures(booking.bookingId)).toHaveLength(0);
      expect(await signatures(noWaiver.bookingId)).toHaveLength(0);
    });

    it('when one IP signs too often, then 429 rate_limited', async () => {
      const ip = clientIp();
      const token = waiverToken(randomUUID(), demo.tenant.id);

      const results = [];
      for (let i = 0; i < 31; i += 1) results.push(await sign(token, signBody('Ada'), ip));

      expect(results.slice(0, 30).every((r) => r.status === 404)).toBe(true);
      expect(results[30]!.status).toBe(429);
      expect(results[30]!.body.error).toBe('rate_limited');
    });
  });

  describe('request logs', () => {
    it('when a guest reads and signs a waiver, then no request log line contains the token', async () => {
      const lines: string[] = [];
      const deps = createAppDeps(loadConfig({ ...process.env, TRUST_PROXY: '1' }));
      deps.logger = pino(
        { level: 'info' },
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            lines.push(chunk.toString('utf8'));
            done();
          },
        }),
      );
      const app = createApp(deps);
      try {
        const booking = await makeBooking(demo);
        const token = tokenOf(booking.waiverUrl);

        await request(app).get(`/api/waivers/${token}`).expect(200);
        await request(app).post(`/api/waivers/${token}/sign`).set('X-Forwarded-For', clientIp()).send(signBody('Ada'));
        const requestUrls = () =>
          lines.map((line) => (JSON.parse(line) as { req?: { url?: string } }).req?.url).filter(Boolean);
        const urls = await waitUntil(() => requestUrls().length >= 2 && requestUrls(), {
          timeoutMs: 2000,
          intervalMs: 20,
          what: 'both requests to be logged',
        });
        expect(urls).toEqual(['/api/waivers/[token]', '/api/waivers/[token]/sign']);
        expect(lines.join('\n')).not.toContain(token);
        expect(lines.join('\n')).not.toContain(token.split('.')[2]!);
      } finally {
        await closeAppDeps(deps);
      }
    });
  });
});
