import { writeFileSync } from 'node:fs';
import { eventsRecordedInThisProcess } from '@booking/events/src/payloads/check-fields';
import { recordFileFor } from './emitted-events';

// What this test file's in-process app recorded, for the catalogue test (see emitted-events.ts).
afterAll(() => {
  const testPath = expect.getState().testPath!;
  writeFileSync(recordFileFor(testPath), JSON.stringify([...eventsRecordedInThisProcess()]));
});
