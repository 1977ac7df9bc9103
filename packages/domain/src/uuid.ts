/**
 * The canonical uuid text form, the only one PostgreSQL's uuid type and our ids use (no braces,
 * no `urn:uuid:` prefix).
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
