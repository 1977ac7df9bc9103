import { createHash } from 'node:crypto';
import path from 'node:path';

/**
 * Where this test run keeps what each integration test file saw recorded, so the catalogue test
 * (event-catalogue-coverage.integration-test.ts) can fail on an event no test produced. The
 * sequencer (test-sequencer.cjs) makes the run's directory, lists the run's files in it and
 * names it in EMITTED_EVENTS_DIR before any file starts.
 */
function runDir(): string {
  const dir = process.env.EMITTED_EVENTS_DIR;
  if (!dir) throw new Error('EMITTED_EVENTS_DIR is not set: run the tests with jest.config.ts (its test sequencer)');
  return dir;
}

/** The list of the run's integration files, the catalogue test aside. */
export const runManifest = () => path.join(runDir(), 'run.json');

/** The file one test file writes its recorded events to. */
export function recordFileFor(testPath: string): string {
  return path.join(runDir(), `${createHash('sha1').update(testPath).digest('hex')}.json`);
}
