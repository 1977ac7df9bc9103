import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The NODE_OPTIONS that `root`'s Dockerfile gives every process of the image (V8's heap sizes):
 * what a process started here needs to run as it does in its container. Empty when the Dockerfile
 * sets none or is absent (an older checkout); a line this cannot read throws, rather than letting
 * a process run without what the image gives it.
 */
export function imageNodeOptions(root: string): string {
  let dockerfile: string;
  try {
    dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  } catch {
    return '';
  }
  // Docker reads instructions in any case, and an ENV line may set several variables.
  const lines = dockerfile.split(/\r?\n/).filter((line) => /^\s*ENV\s.*\bNODE_OPTIONS\b/i.test(line));
  if (lines.length === 0) return '';
  // The last one is the image's, as Docker reads them.
  const line = lines.at(-1)!;
  const value = /^\s*ENV\s+NODE_OPTIONS="([^"]*)"\s*$/i.exec(line)?.[1];
  if (value === undefined) throw new Error(`${path.join(root, 'Dockerfile')}: cannot read ${line.trim()}`);
  return value;
}
