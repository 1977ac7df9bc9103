import type { Child } from './children';

/** The app's Prometheus metrics as text, or undefined when they cannot be read. */
export async function scrape(handle: Child): Promise<string | undefined> {
  if (!handle.metricsUrl) return undefined;
  try {
    const response = await fetch(handle.metricsUrl, { signal: AbortSignal.timeout(5_000) });
    return await response.text();
  } catch {
    return undefined;
  }
}

/** The value of the sample `name` (with its labels, as written) in `text`; NaN when absent. */
export function sample(text: string, name: string): number {
  // prom-client writes one sample per line, `name{labels} value`, without timestamps.
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(name.length + 1));
}
