import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { withEventTable } from './event-table';

/** `pnpm docs:events`: rewrites the event data table of docs/webhooks.md from the schemas. */
async function main() {
  const path = resolve(__dirname, '../../../../docs/webhooks.md');
  const options = { ...(await resolveConfig(path)), filepath: path };
  const doc = await format(withEventTable(readFileSync(path, 'utf8')), options);
  writeFileSync(path, doc);
}

void main();
