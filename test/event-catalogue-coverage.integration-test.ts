import { existsSync, readFileSync } from 'node:fs';
import { SUBSCRIBABLE_EVENTS } from '@booking/events';
import { waitUntil } from '@booking/test-kit';
import { recordFileFor, runManifest } from './emitted-events';

/**
 * Catalogue events whose producers do not exist yet: each leaves this list with the change that
 * produces it. Everything else an endpoint can subscribe to must have been seen recorded by some test.
 */
const NOT_PRODUCED_YET_NAMES = new Set<string>([]);
const NOT_PRODUCED_YET = (name: string) => NOT_PRODUCED_YET_NAMES.has(name);

/** Events recorded about more than one kind of entity: each kind must be seen. */
const ENTITY_VARIANTS = [
  'gift_card.redeemed booking',
  'gift_card.redeemed order',
  'refund.created booking',
  'refund.created order',
  'membership.discount_used booking',
  'membership.discount_used order',
];

// Jest's sequencer (test/test-sequencer.ts) starts this file last; it waits for the files still
// running to report. Other files of the run are all integration files but this one.
const WAIT_FOR_OTHER_FILES_MS = 15 * 60_000;

describe('the event catalogue', () => {
  it(
    'when the whole suite has run, then every subscribable event was seen recorded by a test, for each entity it can be about',
    async () => {
      const files = JSON.parse(readFileSync(runManifest(), 'utf8')) as string[];
      await waitUntil(() => files.every((file) => existsSync(recordFileFor(file))), {
        timeoutMs: WAIT_FOR_OTHER_FILES_MS,
        intervalMs: 500,
        what: () => `the events of ${files.filter((file) => !existsSync(recordFileFor(file))).join(', ')}`,
      });
      const seen = new Set(files.flatMap((file) => JSON.parse(readFileSync(recordFileFor(file), 'utf8')) as string[]));
      const seenNames = new Set([...seen].map((entry) => entry.split(' ')[0]));

      const expected = SUBSCRIBABLE_EVENTS.filter((name) => !NOT_PRODUCED_YET(name));
      const unseen = [
        ...expected.filter((name) => !seenNames.has(name)),
        ...ENTITY_VARIANTS.filter((variant) => !seen.has(variant)),
      ];
      // Run alone, this test sees nothing: it speaks for the whole suite (`pnpm test`).
      expect(unseen).toEqual([]);
    },
    WAIT_FOR_OTHER_FILES_MS + 60_000,
  );
});
