// Our signed tokens (`t1.<claims>.<mac>`), wherever a client put one.
const SIGNED_TOKEN = /t1\.[\w-]+\.[\w-]*/gi;

// Query parameters whose values are never personal data or credentials. Every other value is
// hidden: an e-mail filter, or a token someone pasted into a query, must not reach the logs.
const HARMLESS_QUERY_PARAMS = new Set(['tenant', 'experience', 'limit', 'cursor', 'status', 'event', 'since']);

/**
 * A request target as the logs may show it. The segment after `waivers` is a guest's
 * credential (the waiver token), signed tokens are credentials wherever they appear, and query
 * values other than harmless ones are hidden. Works on every form a client can send: origin
 * form (`/api/...`), absolute form (`http://host/api/...`) and targets starting with `//`;
 * segments are compared case-insensitively, as Express routes them.
 */
export function redactUrl(target: string): string {
  const queryAt = target.search(/[?#]/);
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  const query = queryAt === -1 ? '' : target.slice(queryAt + 1).replace(/#.*$/, '');
  const segments = path.split('/');
  const redactedPath = segments
    .map((segment, i) => (i > 0 && segments[i - 1]!.toLowerCase() === 'waivers' ? '[token]' : segment))
    .join('/')
    .replace(SIGNED_TOKEN, '[token]');
  if (queryAt === -1) return redactedPath;
  const redactedQuery = query
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0]!;
      return HARMLESS_QUERY_PARAMS.has(name.toLowerCase())
        ? pair.replace(SIGNED_TOKEN, '[token]')
        : `${name}=[redacted]`;
    })
    .join('&');
  return `${redactedPath}?${redactedQuery}`;
}
