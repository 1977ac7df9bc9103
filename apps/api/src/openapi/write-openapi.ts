import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadConfig } from '@booking/config';
import { buildOpenApiDocument } from './openapi-document';

/**
 * Writes the OpenAPI document as the service serves it (default settings) to the file named on
 * the command line, for `pnpm lint` to check it with Redocly: the document is built in code, so
 * there is no file to lint until this writes one. Usage: tsx write-openapi.ts <file>.
 */
const target = process.argv[2];
if (!target) {
  console.error('usage: tsx apps/api/src/openapi/write-openapi.ts <file>');
  process.exit(2);
}
const file = resolve(target);
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(loadConfig({})), null, 2)}\n`);
