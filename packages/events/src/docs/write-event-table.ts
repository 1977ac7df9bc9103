import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { format } from 'prettier';
import { withEventTable } from './event-table';

/** `pnpm docs:events`: rewrites the event data table of docs/webhooks.md from the schemas. */
async function main() {
  const path = resolve(__dirname, '../../../../docs/webhooks.md');
  const doc = await format(withEventTable(readFileSync(path, 'utf8')), { filepath: path });
  writeFileSync(path, doc);
}

void main();
