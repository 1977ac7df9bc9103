import { appendFileSync } from 'node:fs';
import { checkedResponses, takeViolations } from '@booking/test-kit/src/conformance-violations';

// Every answer of the app checked against the OpenAPI document (see response-conformance in
// @booking/test-kit): a test whose requests got an answer the document does not describe fails.
afterEach(() => {
  const violations = takeViolations();
  if (violations.length > 0) {
    throw new Error(`answers that do not conform to the OpenAPI document:\n  ${violations.join('\n  ')}`);
  }
});

afterAll(() => {
  const violations = takeViolations();
  if (violations.length > 0) {
    throw new Error(
      `answers after the last test that do not conform to the OpenAPI document:\n  ${violations.join('\n  ')}`,
    );
  }
  // For a run's summary: RESPONSE_CONFORMANCE_COUNTS=<file> collects one line per test file.
  const counts = process.env.RESPONSE_CONFORMANCE_COUNTS;
  if (counts) appendFileSync(counts, `${expect.getState().testPath} ${checkedResponses()}\n`);
});
