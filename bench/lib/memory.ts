import type { Child } from './children';
import { sample, scrape } from './metrics';

/** An app's memory as its Prometheus metrics tell it (prom-client's default metrics). */
export interface MemoryReading {
  /** V8 heap in use, MB. */
  heapMb: number;
  /** Memory V8 tracks outside its heap (Buffers, ArrayBuffers), MB. */
  externalMb: number;
  /** Major collections since the process started. */
  majorGcs: number;
}

/** The app's memory now, or undefined when its metrics cannot be read. */
export async function readMemory(handle: Child): Promise<MemoryReading | undefined> {
  const text = await scrape(handle);
  if (text === undefined) return undefined;
  // The collection series appears with the first major collection: before it, there were none.
  const majorGcs = sample(text, 'nodejs_gc_duration_seconds_count{kind="major"}');
  const reading = {
    heapMb: sample(text, 'nodejs_heap_size_used_bytes') / 1024 / 1024,
    externalMb: sample(text, 'nodejs_external_memory_bytes') / 1024 / 1024,
    majorGcs: Number.isNaN(majorGcs) ? 0 : majorGcs,
  };
  return Object.values(reading).every(Number.isFinite) ? reading : undefined;
}

/**
 * The memory a process keeps over a window of readings: the lowest heap in use plus external
 * memory among them, if a major collection ran in the window (the heap's low point follows one;
 * without one the lowest reading may be anywhere on the collector's sawtooth). The reading after
 * a collection comes up to a sampling interval later, with what was allocated since on top, so
 * the figure is near the kept memory, not exactly it. `before` is the last reading ahead of the
 * window, whose collection count the window's is compared with.
 */
export function keptMb(window: MemoryReading[], before: MemoryReading | undefined): number | undefined {
  const last = window.at(-1);
  const first = before ?? window[0];
  if (!last || !first || last.majorGcs <= first.majorGcs) return undefined;
  return Math.min(...window.map((r) => r.heapMb + r.externalMb));
}
