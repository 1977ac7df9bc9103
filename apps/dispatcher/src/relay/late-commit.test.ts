import { LATE_COMMIT_MS, lateCommitFor } from './outbox-relay';

describe('the relay late-commit margin', () => {
  it('when transactions may run up to the default timeouts, then a drain reads from a minute back', () => {
    expect(lateCommitFor(10_000)).toBe(LATE_COMMIT_MS);
    expect(LATE_COMMIT_MS).toBe(60_000);
  });

  it('when a timeout allows longer transactions, then the margin is twice it', () => {
    expect(lateCommitFor(45_000)).toBe(90_000);
  });
});
