/** The id of a Stripe reference that may come expanded (an object) or not (its id). */
export function idOf(value: string | { id: string } | null | undefined): string | null {
  return typeof value === 'string' ? value : (value?.id ?? null);
}
