/**
 * Name suffixes that never lead to a public receiver: each is either special-use (it resolves
 * only on the local machine or network, or never) or a private convention that public DNS never
 * delegates. A name equal to one of them, or under one, is internal.
 */
const RESERVED_SUFFIXES = [
  // RFC 6761: loopback, never delegated (tests, documentation, certain failure).
  'localhost',
  'test',
  'invalid',
  'example',
  // RFC 6762: multicast DNS on the local link.
  'local',
  // ICANN (2024): reserved for private use, like 10/8 for names.
  'internal',
  // The infrastructure domain: reverse lookups, ipv4only.arpa, RFC 8375's home.arpa networks.
  'arpa',
  // RFC 7686: reachable only through Tor.
  'onion',
  // Deferred indefinitely by ICANN because so many private networks already use them.
  'corp',
  'home',
  'mail',
  // Common private-network conventions, absent from the root zone.
  'lan',
  'intranet',
];

/** `host`, lowercase as the URL parser gives it and without a trailing dot. */
export function isReservedHostName(host: string): boolean {
  return RESERVED_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`));
}
