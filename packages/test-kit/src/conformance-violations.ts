// What response-conformance found, apart from the checker itself so that the Jest set-up that
// reads it (test/response-conformance-setup.ts) does not load the app into test files without one.

const violations: string[] = [];
let checked = 0;

export function recordViolation(violation: string): void {
  violations.push(violation);
}

export function countChecked(): void {
  checked += 1;
}

/** The violations recorded since the last call, which forgets them. */
export function takeViolations(): string[] {
  return violations.splice(0);
}

/** How many answers were checked in this test file. */
export function checkedResponses(): number {
  return checked;
}
