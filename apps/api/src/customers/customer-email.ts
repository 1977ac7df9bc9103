/**
 * An email as customers are stored and matched by: trimmed and lower-cased. Customers are unique
 * per tenant by this form, and the database's unique key compares exactly, so every path that
 * finds or makes a customer by email goes through here first.
 */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
