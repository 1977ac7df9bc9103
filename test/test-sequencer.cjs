// Plain CommonJS: Jest loads a sequencer with require, outside its TypeScript transform.
const { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const CATALOGUE_TEST = 'event-catalogue-coverage.integration-test.ts';
const RUNS_DIR = path.resolve(__dirname, '../node_modules/.cache/emitted-events');
const DAY_MS = 86_400_000;

/**
 * Jest's own order (slowest and last-failed first), with the event catalogue test moved to the
 * end: it waits for every other integration file of the run to report the events it recorded.
 *
 * Each run gets a directory of its own, named in EMITTED_EVENTS_DIR for the test workers (they
 * start after the sequencer and inherit its environment), holding `run.json`, the run's other
 * integration files, and one record per file (test/emitted-events.ts). Two runs at once never
 * mix their records; directories of runs older than a day are removed.
 */
class CatalogueLastSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const isCatalogue = (test) => path.basename(test.path) === CATALOGUE_TEST;
    const ordered = [...sorted.filter((test) => !isCatalogue(test)), ...sorted.filter(isCatalogue)];

    mkdirSync(RUNS_DIR, { recursive: true });
    for (const old of readdirSync(RUNS_DIR)) {
      const dir = path.join(RUNS_DIR, old);
      if (Date.now() - statSync(dir).mtimeMs > DAY_MS) rmSync(dir, { recursive: true, force: true });
    }
    const runDir = path.join(RUNS_DIR, `${process.pid}-${Date.now()}`);
    mkdirSync(runDir, { recursive: true });
    process.env.EMITTED_EVENTS_DIR = runDir;
    const others = ordered
      .map((test) => test.path)
      .filter((file) => file.endsWith('.integration-test.ts') && path.basename(file) !== CATALOGUE_TEST);
    writeFileSync(path.join(runDir, 'run.json'), JSON.stringify(others));
    return ordered;
  }
}

module.exports = CatalogueLastSequencer;
