const WAIVER_PATH = /^(\/api\/waivers\/)[^/?#]+/i;

/**
 * The waiver token in the path is the guest's credential: request logs show
 * `/api/waivers/[token]` instead. Express matches routes case-insensitively, so does this.
 */
export function redactWaiverUrl(url: string): string {
  return url.replace(WAIVER_PATH, '$1[token]');
}
