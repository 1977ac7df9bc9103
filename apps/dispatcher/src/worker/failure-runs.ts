/**
 * What a batch of attempts does to one endpoint's run of consecutive failures, applied in the
 * order the attempts are listed, exactly as recording them one by one would: a success resets
 * the run, a failure extends it, and the endpoint is disabled once the run reaches the limit.
 */
export interface FailureRuns {
  /** Failures before the batch's first success (all of them when there is none): they extend the stored run. */
  leading: number;
  /** The batch has a success: the stored run ends there, and the new run is `trailing`. */
  reset: boolean;
  /** Failures after the batch's last success. */
  trailing: number;
  /** The longest run of failures that starts inside the batch (after a success). */
  longestInner: number;
}

export function failureRuns(succeeded: boolean[]): FailureRuns {
  let leading = 0;
  let reset = false;
  let current = 0;
  let longestInner = 0;
  for (const ok of succeeded) {
    if (ok) {
      reset = true;
      current = 0;
    } else if (reset) {
      current += 1;
      longestInner = Math.max(longestInner, current);
    } else {
      leading += 1;
    }
  }
  return { leading, reset, trailing: reset ? current : 0, longestInner };
}
