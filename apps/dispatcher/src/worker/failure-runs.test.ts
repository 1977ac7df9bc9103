import { failureRuns } from './failure-runs';

/** The stored run after recording `succeeded` one by one from `stored`, and whether it reached `limit`. */
function oneByOne(stored: number, succeeded: boolean[], limit: number): { run: number; reached: boolean } {
  let run = stored;
  let reached = false;
  for (const ok of succeeded) {
    run = ok ? 0 : run + 1;
    if (run >= limit) reached = true;
  }
  return { run, reached };
}

/** What the recorder's SQL computes from the runs. */
function batched(stored: number, succeeded: boolean[], limit: number): { run: number; reached: boolean } {
  const runs = failureRuns(succeeded);
  return {
    run: runs.reset ? runs.trailing : stored + runs.leading,
    reached: (runs.leading > 0 && stored + runs.leading >= limit) || runs.longestInner >= limit,
  };
}

describe('failureRuns', () => {
  it('when a batch is applied at once, then the run and the disabling match recording each attempt in turn', () => {
    // Every sequence of up to 8 attempts, from stored runs around a limit of 3.
    for (let length = 0; length <= 8; length += 1) {
      for (let bits = 0; bits < 2 ** length; bits += 1) {
        const succeeded = Array.from({ length }, (_, i) => ((bits >> i) & 1) === 1);
        for (const stored of [0, 1, 2, 3, 5]) {
          expect({ stored, succeeded, ...batched(stored, succeeded, 3) }).toEqual({
            stored,
            succeeded,
            ...oneByOne(stored, succeeded, 3),
          });
        }
      }
    }
  });
});
