import { parseArgs } from 'node:util';
import { loadConfig } from '@booking/config';
import { createPrismaClient, type Db } from '@booking/db';
import { parseApiKey } from '@booking/signing';
import {
  ApiKeyAdminError,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  ROLES,
  SCOPES,
  validateKeyRequest,
  type ApiKeySummary,
} from '../operators/api-key-admin';

const USAGE = `Tenant API keys.

Usage:
  pnpm keys create --tenant <slug> --role ${ROLES.join('|')} [--name <text>] [--scope ${Object.keys(SCOPES).join('|')}]... [--json]
  pnpm keys list --tenant <slug> [--json]
  pnpm keys revoke <prefix> [--tenant <slug>] [--json]

create prints the key (svc_<prefix>.<secret>) once: only its prefix and a hash of its secret are stored.
Scopes are only allowed on admin keys. Exit codes: 0 done, 1 not found or failed, 2 usage error.`;

const EXIT_NOT_FOUND = 1;
const EXIT_USAGE = 2;

class UsageError extends Error {}

type Options = { tenant?: string; role?: string; name?: string; scope?: string[]; json?: boolean; help?: boolean };

function parse(argv: string[]): { command: string | undefined; positionals: string[]; options: Options } {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        tenant: { type: 'string' },
        role: { type: 'string' },
        name: { type: 'string' },
        scope: { type: 'string', multiple: true },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    const [command, ...rest] = positionals;
    return { command, positionals: rest, options: values };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function allowOnly(command: string, options: Options, allowed: (keyof Options)[]): void {
  for (const [name, value] of Object.entries(options)) {
    if (value !== undefined && !allowed.includes(name as keyof Options)) {
      throw new UsageError(`${command} does not take --${name}`);
    }
  }
}

function required(option: string | undefined, name: string): string {
  if (option === undefined || option.trim() === '') throw new UsageError(`--${name} is required`);
  return option.trim();
}

/** `svc_<prefix>.<secret>` or `svc_<prefix>` are accepted for a prefix, so a pasted key works too. */
function prefixOf(text: string): string {
  return parseApiKey(text)?.prefix ?? text.replace(/^svc_/, '');
}

function print(line = ''): void {
  process.stdout.write(`${line}\n`);
}

function table(keys: ApiKeySummary[]): string {
  const header = ['PREFIX', 'NAME', 'ROLE', 'SCOPES', 'CREATED_AT', 'LAST_USED_AT', 'REVOKED_AT'];
  const rows = keys.map((k) => [
    k.prefix,
    k.name,
    k.role,
    k.scopes.join(',') || '-',
    k.created_at,
    k.last_used_at ?? '-',
    k.revoked_at ?? '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

async function withDb<T>(run: (db: Db) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = createPrismaClient(config.databaseUrl, { poolSize: 1 });
  try {
    return await run(db);
  } finally {
    await db.$disconnect();
  }
}

async function main(argv: string[]): Promise<void> {
  const { command, positionals, options } = parse(argv);
  if (options.help || command === 'help') {
    print(USAGE);
    return;
  }
  switch (command) {
    case 'create': {
      allowOnly(command, options, ['tenant', 'role', 'name', 'scope', 'json']);
      if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
      const tenantSlug = required(options.tenant, 'tenant');
      const role = required(options.role, 'role');
      // Checked before connecting, so a typo is a usage error whatever the database says.
      validateKeyRequest({ role, scopes: options.scope, name: options.name });
      const key = await withDb((db) =>
        createApiKey(db, { tenantSlug, role, name: options.name, scopes: options.scope }),
      );
      if (options.json) {
        print(JSON.stringify(key));
        return;
      }
      print(`Created API key "${key.name}" for tenant ${key.tenant.slug}.`);
      print(`  prefix: ${key.prefix}`);
      print(`  role:   ${key.role}`);
      print(`  scopes: ${key.scopes.join(', ') || '(none)'}`);
      print();
      print(`  ${key.key}`);
      print();
      print('This is the only time the key is shown: only a hash of its secret is stored. Keep it somewhere safe.');
      return;
    }
    case 'list': {
      allowOnly(command, options, ['tenant', 'json']);
      if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
      const tenantSlug = required(options.tenant, 'tenant');
      const keys = await withDb((db) => listApiKeys(db, tenantSlug));
      if (options.json) print(JSON.stringify(keys));
      else print(keys.length === 0 ? `tenant ${tenantSlug} has no API keys` : table(keys));
      return;
    }
    case 'revoke': {
      allowOnly(command, options, ['tenant', 'json']);
      if (positionals.length !== 1) throw new UsageError('revoke takes exactly one key prefix');
      const prefix = prefixOf(positionals[0]!.trim());
      const tenantSlug = options.tenant === undefined ? undefined : required(options.tenant, 'tenant');
      const result = await withDb((db) => revokeApiKey(db, prefix, { tenantSlug }));
      if (options.json) print(JSON.stringify(result));
      else if (result.already_revoked)
        print(`key ${prefix} was already revoked at ${result.revoked_at}; nothing changed`);
      else print(`revoked key ${prefix} at ${result.revoked_at}`);
      return;
    }
    case undefined:
      throw new UsageError('a command is required');
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`keys: ${error.message}\n\n${USAGE}`);
    process.exitCode = EXIT_USAGE;
  } else if (error instanceof ApiKeyAdminError) {
    console.error(`keys: ${error.message}`);
    process.exitCode = error.code.endsWith('_not_found') ? EXIT_NOT_FOUND : EXIT_USAGE;
  } else {
    console.error(`keys: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
});
