import { UNEXPECTED_FAILURE_RUNS, unexpectedFailureDelay } from './index';

describe('unexpectedFailureDelay', () => {
  it('when runs keep throwing, then the waits double from 1 s and never exceed a minute', () => {
    const waits = Array.from({ length: UNEXPECTED_FAILURE_RUNS }, (_, i) => unexpectedFailureDelay(i + 1));
    expect(waits.slice(0, 8)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
    expect(Math.max(...waits)).toBe(60_000);
  });

  it('when every run throws, then the job is kept for 10 to 20 minutes before the sweeper takes over', () => {
    const kept = Array.from({ length: UNEXPECTED_FAILURE_RUNS - 1 }, (_, i) => unexpectedFailureDelay(i + 1)).reduce(
      (sum, wait) => sum + wait,
      0,
    );
    expect(kept).toBeGreaterThanOrEqual(10 * 60_000);
    expect(kept).toBeLessThanOrEqual(20 * 60_000);
  });
});
