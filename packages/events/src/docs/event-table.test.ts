import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { TABLE_END, TABLE_START, eventTableMarkdown } from './event-table';

/** A markdown table's cells, trimmed, so prettier's column padding does not count. */
const cells = (table: string) =>
  table
    .trim()
    .split('\n')
    .map((line) =>
      line
        .split('|')
        .map((cell) => cell.trim())
        .map((cell) => (/^-+$/.test(cell) ? '---' : cell)),
    );

describe('the event data table of docs/webhooks.md', () => {
  it('when the payload schemas change, then the committed table must be regenerated (pnpm docs:events)', () => {
    const doc = readFileSync(resolve(__dirname, '../../../../docs/webhooks.md'), 'utf8');
    const committed = doc.slice(doc.indexOf(TABLE_START) + TABLE_START.length, doc.indexOf(TABLE_END));
    expect(cells(committed)).toEqual(cells(eventTableMarkdown()));
  });
});
