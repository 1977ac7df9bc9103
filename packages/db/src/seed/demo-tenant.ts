import { randomBytes, randomUUID } from 'node:crypto';
import { generateApiKey, generateGiftCardCode, hashGiftCardCode } from '@booking/signing';
import type { Db } from '../prisma-client';

/** What `pnpm --silent seed --json` prints: everything a demo or a test needs to drive the API. */
export interface DemoTenant {
  tenant: { id: string; slug: string };
  venue_id: string;
  api_keys: { admin: string; manager: string; staff: string };
  experiences: {
    id: string;
    slug: string;
    currency: string;
    base_price_cents: number;
    min_party_size: number;
    max_party_size: number;
    requires_waiver: boolean;
    slots: { id: string; starts_at: string; capacity: number; price_cents: number | null }[];
    addons: { id: string; price_cents: number }[];
  }[];
  gift_cards: { code: string; balance_cents: number; currency: string }[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

interface ExperienceBlueprint {
  slug: string;
  name: string;
  description: string;
  basePriceCents: number;
  minPartySize: number;
  maxPartySize: number;
  durationMinutes: number;
  requiresWaiver: boolean;
  capacity: number;
  addons: { name: string; priceCents: number }[];
}

const BLUEPRINTS: ExperienceBlueprint[] = [
  {
    slug: 'harbour-kayak-tour',
    name: 'Harbour Kayak Tour',
    description: 'Two hours paddling the old harbour with a guide.',
    basePriceCents: 4500,
    minPartySize: 1,
    maxPartySize: 12,
    durationMinutes: 120,
    requiresWaiver: true,
    capacity: 24,
    addons: [
      { name: 'Dry bag', priceCents: 800 },
      { name: 'Photo package', priceCents: 1500 },
    ],
  },
  {
    slug: 'escape-room-vault',
    name: 'Escape Room: The Vault',
    description: 'Sixty minutes to crack the vault.',
    basePriceCents: 2800,
    minPartySize: 2,
    maxPartySize: 8,
    durationMinutes: 60,
    requiresWaiver: false,
    capacity: 20,
    addons: [
      { name: 'Hint pack', priceCents: 500 },
      { name: 'Souvenir photo', priceCents: 1000 },
    ],
  },
];

/** Whole hours from now, so slots read naturally in a demo. */
function slotStart(now: Date, offsetMs: number): Date {
  const at = new Date(now.getTime() + offsetMs);
  at.setUTCMinutes(0, 0, 0);
  return at;
}

/**
 * Creates a new demo tenant with unique slugs: two experiences (one requiring a waiver), six
 * bookable slots each in the next 14 days (one with a price override), one 20 days out and one in
 * the past, two addons each, API keys for every role, and two gift cards.
 */
export async function seedDemoTenant(db: Db, options: { now?: Date; name?: string } = {}): Promise<DemoTenant> {
  const now = options.now ?? new Date();
  const suffix = randomBytes(4).toString('hex');
  const tenantId = randomUUID();
  const venueId = randomUUID();
  const currency = 'USD';

  const keys = { admin: generateApiKey(), manager: generateApiKey(), staff: generateApiKey() };
  const giftCards = [
    { code: generateGiftCardCode(), balanceCents: 1_000_000 },
    { code: generateGiftCardCode(), balanceCents: 500 },
  ];

  const experiences = BLUEPRINTS.map((blueprint) => {
    const experienceId = randomUUID();
    const offsets = [1, 2, 3, 5, 8, 12].map((days) => days * DAY_MS + 10 * 60 * 60 * 1000);
    offsets.push(20 * DAY_MS, -1 * DAY_MS);
    const slots = offsets.map((offset, index) => {
      const startsAt = slotStart(now, offset);
      return {
        id: randomUUID(),
        tenantId,
        experienceId,
        startsAt,
        endsAt: new Date(startsAt.getTime() + blueprint.durationMinutes * 60_000),
        capacity: blueprint.capacity,
        // The third slot is a peak-time slot with its own price.
        priceCents: index === 2 ? Math.round(blueprint.basePriceCents * 1.5) : null,
      };
    });
    const addons = blueprint.addons.map((addon) => ({ id: randomUUID(), tenantId, experienceId, ...addon }));
    return { experienceId, blueprint, slots, addons };
  });

  await db.$transaction(async (tx) => {
    await tx.tenant.create({
      data: { id: tenantId, slug: `demo-${suffix}`, name: options.name ?? `Demo Attractions ${suffix}` },
    });
    await tx.venue.create({ data: { id: venueId, tenantId, name: 'Harbourside' } });
    for (const { experienceId, blueprint, slots, addons } of experiences) {
      await tx.experience.create({
        data: {
          id: experienceId,
          tenantId,
          venueId,
          slug: blueprint.slug,
          name: blueprint.name,
          description: blueprint.description,
          currency,
          basePriceCents: blueprint.basePriceCents,
          minPartySize: blueprint.minPartySize,
          maxPartySize: blueprint.maxPartySize,
          durationMinutes: blueprint.durationMinutes,
          requiresWaiver: blueprint.requiresWaiver,
        },
      });
      await tx.slot.createMany({ data: slots });
      await tx.addon.createMany({ data: addons });
    }
    await tx.apiKey.createMany({
      data: (Object.keys(keys) as (keyof typeof keys)[]).map((role) => ({
        tenantId,
        name: `Demo ${role} key`,
        prefix: keys[role].prefix,
        secretHash: keys[role].secretHash,
        role,
        scopes: role === 'admin' ? ['webhooks:write'] : [],
      })),
    });
    await tx.giftCard.createMany({
      data: giftCards.map((card) => ({
        tenantId,
        codeHash: hashGiftCardCode(card.code),
        codeLast4: card.code.slice(-4),
        currency,
        balanceCents: card.balanceCents,
      })),
    });
  });

  return {
    tenant: { id: tenantId, slug: `demo-${suffix}` },
    venue_id: venueId,
    api_keys: { admin: keys.admin.token, manager: keys.manager.token, staff: keys.staff.token },
    experiences: experiences.map(({ experienceId, blueprint, slots, addons }) => ({
      id: experienceId,
      slug: blueprint.slug,
      currency,
      base_price_cents: blueprint.basePriceCents,
      min_party_size: blueprint.minPartySize,
      max_party_size: blueprint.maxPartySize,
      requires_waiver: blueprint.requiresWaiver,
      slots: slots.map((slot) => ({
        id: slot.id,
        starts_at: slot.startsAt.toISOString(),
        capacity: slot.capacity,
        price_cents: slot.priceCents,
      })),
      addons: addons.map((addon) => ({ id: addon.id, price_cents: addon.priceCents })),
    })),
    gift_cards: giftCards.map((card) => ({ code: card.code, balance_cents: card.balanceCents, currency })),
  };
}
