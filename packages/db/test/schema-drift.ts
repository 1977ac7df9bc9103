import { getDMMF } from '@prisma/internals';
import type { ClientBase } from 'pg';

// @prisma/dmmf is not a dependency of ours (pnpm keeps it private to @prisma/internals), so the
// DMMF types are taken from getDMMF's signature.
type Datamodel = Awaited<ReturnType<typeof getDMMF>>['datamodel'];
type Model = Datamodel['models'][number];
type Field = Model['fields'][number];

/** Bookkeeping of the migration runner and `prisma migrate`, not part of schema.prisma. */
const IGNORED_TABLES = new Set(['_prisma_migrations']);

// Prisma's default column type per scalar on PostgreSQL, as format_type() spells it.
const DEFAULT_TYPES: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Float: 'double precision',
  Decimal: 'numeric(65,30)',
  Boolean: 'boolean',
  DateTime: 'timestamp(3) without time zone',
  Json: 'jsonb',
  Bytes: 'bytea',
};

// @db.* native types, as format_type() spells them; `$n` is the first argument.
const NATIVE_TYPES: Record<string, string> = {
  Uuid: 'uuid',
  Text: 'text',
  Char: 'character($1)',
  VarChar: 'character varying($1)',
  Integer: 'integer',
  SmallInt: 'smallint',
  BigInt: 'bigint',
  Boolean: 'boolean',
  Date: 'date',
  Timestamp: 'timestamp($1) without time zone',
  Timestamptz: 'timestamp($1) with time zone',
  Json: 'json',
  JsonB: 'jsonb',
};

// pg_constraint.confdeltype / confupdtype codes, named as Prisma names referential actions.
const REFERENTIAL_ACTIONS: Record<string, string> = {
  a: 'NoAction',
  r: 'Restrict',
  c: 'Cascade',
  n: 'SetNull',
  d: 'SetDefault',
};

interface ColumnRow {
  table: string;
  column: string;
  type: string;
  nullable: boolean;
  default: string | null;
}

function expectedType(field: Field, datamodel: Datamodel): string {
  let base: string | undefined;
  if (field.kind === 'enum') {
    const enumType = datamodel.enums.find((e) => e.name === field.type);
    base = enumType?.dbName ?? field.type;
  } else if (field.nativeType) {
    const [name, args] = field.nativeType;
    // Prisma's default DateTime precision is 3, also when @db.Timestamptz has no argument.
    base = NATIVE_TYPES[name]?.replace('$1', args[0] ?? '3');
    if (!base) return `unsupported native type @db.${name} (teach schema-drift.ts about it)`;
  } else {
    base = DEFAULT_TYPES[field.type];
    if (!base) return `unsupported scalar ${field.type} (teach schema-drift.ts about it)`;
  }
  return field.isList ? `${base}[]` : base;
}

/**
 * The default Prisma puts in the database, as pg_get_expr() prints it after stripping a
 * `'literal'::type` cast; null when Prisma fills the value itself (uuid(), cuid(), @updatedAt).
 */
function expectedDefault(field: Field): string | null {
  const value = field.default;
  if (value === undefined) return null;
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return 'unsupported list default (teach schema-drift.ts about it)';
  const fn = value as { name: string; args: readonly (string | number)[] };
  switch (fn.name) {
    case 'now':
      return 'CURRENT_TIMESTAMP';
    case 'uuid':
    case 'cuid':
    case 'nanoid':
    case 'ulid':
      return null;
    case 'autoincrement':
      return 'nextval(...)';
    case 'dbgenerated':
      return String(fn.args[0] ?? '');
    default:
      return `unsupported default ${fn.name}() (teach schema-drift.ts about it)`;
  }
}

function normaliseDefault(raw: string | null): string | null {
  if (raw === null) return null;
  if (raw.startsWith('nextval(')) return 'nextval(...)';
  // `'held'::booking_status`, `'-1'::integer`: the literal is what Prisma wrote.
  const literal = /^'((?:[^']|'')*)'::[\w ."[\]()]+$/.exec(raw);
  return literal ? literal[1]!.replace(/''/g, "'") : raw;
}

const columnName = (field: Field): string => field.dbName ?? field.name;
const tableName = (model: Model): string => model.dbName ?? model.name;

/** Set difference both ways, phrased for people reading a failed test. */
function diffSets(expected: Set<string>, actual: Set<string>, what: string): string[] {
  const out: string[] = [];
  for (const item of expected) if (!actual.has(item)) out.push(`missing ${what}: ${item}`);
  for (const item of actual) if (!expected.has(item)) out.push(`unexpected ${what}: ${item}`);
  return out;
}

async function readDatabase(client: ClientBase) {
  const columns = await client.query<ColumnRow>(`
    SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
           NOT a.attnotnull AS nullable, pg_get_expr(d.adbin, d.adrelid) AS default
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped`);
  // Every index, keyed by what Prisma would call it; `::text` because pg does not parse name[].
  // Partial indexes and exclusion constraints are left out: schema.prisma cannot state them, so
  // they live in the migrations alone (like the CHECKs and triggers).
  const indexes = await client.query<{ table: string; name: string; kind: string; columns: string[] }>(`
    SELECT t.relname AS table, i.relname AS name,
           CASE WHEN x.indisprimary THEN 'primary key' WHEN x.indisunique THEN 'unique index' ELSE 'index' END AS kind,
           ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(num, ord)
                 JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.num ORDER BY k.ord) AS columns
    FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid
    JOIN pg_class t ON t.oid = x.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE n.nspname = 'public' AND x.indpred IS NULL AND NOT x.indisexclusion`);
  const foreignKeys = await client.query<{
    table: string;
    name: string;
    columns: string[];
    ref_table: string;
    ref_columns: string[];
    on_delete: string;
    on_update: string;
  }>(`
    SELECT t.relname AS table, c.conname AS name, r.relname AS ref_table,
           ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(num, ord)
                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.num ORDER BY k.ord) AS columns,
           ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(num, ord)
                 JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.num ORDER BY k.ord) AS ref_columns,
           c.confdeltype AS on_delete, c.confupdtype AS on_update
    FROM pg_constraint c
    JOIN pg_class t ON t.oid = c.conrelid
    JOIN pg_class r ON r.oid = c.confrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    WHERE c.contype = 'f' AND n.nspname = 'public'`);
  const enums = await client.query<{ name: string; labels: string[] }>(`
    SELECT t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
    FROM pg_type t
    JOIN pg_enum e ON e.enumtypid = t.oid
    JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname = 'public'
    GROUP BY t.typname`);
  return { columns: columns.rows, indexes: indexes.rows, foreignKeys: foreignKeys.rows, enums: enums.rows };
}

/**
 * Compares the public schema of the database `client` is connected to with what `prisma migrate`
 * would create for `schemaText`, and returns one readable line per mismatch (empty: no drift).
 * Checks tables, columns (type, nullability, default), primary keys, unique and plain indexes,
 * foreign keys and enums. Unsupported Prisma features are reported, not skipped, so that a schema
 * change this helper does not understand fails the test instead of passing unchecked.
 */
export async function findSchemaDrift(client: ClientBase, schemaText: string): Promise<string[]> {
  const { datamodel } = await getDMMF({ datamodel: schemaText });
  const db = await readDatabase(client);
  const mismatches: string[] = [];
  const modelByName = new Map(datamodel.models.map((m) => [m.name, m]));

  // Tables and columns.
  const dbTables = new Set(db.columns.map((c) => c.table).filter((t) => !IGNORED_TABLES.has(t)));
  for (const model of datamodel.models) {
    const table = tableName(model);
    if (!dbTables.has(table)) {
      mismatches.push(`missing table: ${table} (model ${model.name})`);
      continue;
    }
    const dbColumns = new Map(db.columns.filter((c) => c.table === table).map((c) => [c.column, c]));
    const scalarFields = model.fields.filter(
      (f) => f.kind === 'scalar' || f.kind === 'enum' || f.kind === 'unsupported',
    );
    for (const field of scalarFields) {
      const name = columnName(field);
      const where = `${table}.${name}`;
      // Prisma creates scalar lists without NOT NULL, whatever DMMF's isRequired says.
      const nullable = field.isList || !field.isRequired;
      const type =
        field.kind === 'unsupported'
          ? `Unsupported("${field.type}") (teach schema-drift.ts about it)`
          : expectedType(field, datamodel);
      const column = dbColumns.get(name);
      dbColumns.delete(name);
      if (!column) {
        mismatches.push(`missing column: ${where} ${type}${nullable ? '' : ' NOT NULL'}`);
        continue;
      }
      const actualType = column.type.replace(/"/g, '');
      if (actualType !== type) mismatches.push(`${where}: type is ${actualType}, schema.prisma says ${type}`);
      if (column.nullable !== nullable) {
        mismatches.push(
          `${where}: is ${column.nullable ? 'nullable' : 'NOT NULL'}, schema.prisma says ${nullable ? 'nullable' : 'NOT NULL'}`,
        );
      }
      const wanted = expectedDefault(field);
      const actual = normaliseDefault(column.default);
      if (actual !== wanted)
        mismatches.push(`${where}: default is ${actual ?? 'none'}, schema.prisma says ${wanted ?? 'none'}`);
    }
    for (const extra of dbColumns.keys())
      mismatches.push(`unexpected column: ${table}.${extra} (not in model ${model.name})`);
  }
  const modelTables = new Set(datamodel.models.map(tableName));
  for (const table of dbTables)
    if (!modelTables.has(table)) mismatches.push(`unexpected table: ${table} (no model maps to it)`);

  // Primary keys, unique and plain indexes, by the names Prisma gives them.
  const columnsOf = (model: Model, fieldNames: readonly string[]): string[] =>
    fieldNames.map((n) => {
      const field = model.fields.find((f) => f.name === n);
      return field ? columnName(field) : n;
    });
  const expectedIndexes = new Set<string>();
  for (const index of datamodel.indexes) {
    const model = modelByName.get(index.model);
    if (!model) continue;
    const table = tableName(model);
    const cols = columnsOf(
      model,
      index.fields.map((f) => f.name),
    );
    const [kind, suffix] =
      index.type === 'id'
        ? ['primary key', 'pkey']
        : index.type === 'unique'
          ? ['unique index', 'key']
          : ['index', 'idx'];
    // Prisma's defaults; names longer than PostgreSQL's 63 bytes would be truncated (not handled).
    const name = index.dbName ?? (index.type === 'id' ? `${table}_pkey` : `${table}_${cols.join('_')}_${suffix}`);
    if (index.type === 'fulltext')
      mismatches.push(`unsupported fulltext index on ${table} (teach schema-drift.ts about it)`);
    expectedIndexes.add(`${kind} ${name} on ${table}(${cols.join(', ')})`);
  }
  const actualIndexes = new Set(
    db.indexes
      .filter((i) => !IGNORED_TABLES.has(i.table))
      .map((i) => `${i.kind} ${i.name} on ${i.table}(${i.columns.join(', ')})`),
  );
  mismatches.push(...diffSets(expectedIndexes, actualIndexes, 'index'));

  // Foreign keys: one per relation field that holds the foreign key.
  const expectedForeignKeys = new Set<string>();
  for (const model of datamodel.models) {
    const table = tableName(model);
    for (const field of model.fields) {
      if (field.kind !== 'object' || !field.relationFromFields?.length) continue;
      const target = modelByName.get(field.type);
      if (!target) continue;
      const cols = columnsOf(model, field.relationFromFields);
      const refCols = columnsOf(target, field.relationToFields ?? []);
      // Prisma's defaults: Restrict for required relations, SetNull for optional ones; Cascade on update.
      const onDelete = field.relationOnDelete ?? (field.isRequired ? 'Restrict' : 'SetNull');
      const onUpdate = field.relationOnUpdate ?? 'Cascade';
      expectedForeignKeys.add(
        `${table}_${cols.join('_')}_fkey on ${table}(${cols.join(', ')}) -> ${tableName(target)}(${refCols.join(', ')}) ` +
          `on delete ${onDelete} on update ${onUpdate}`,
      );
    }
  }
  const actualForeignKeys = new Set(
    db.foreignKeys.map(
      (fk) =>
        `${fk.name} on ${fk.table}(${fk.columns.join(', ')}) -> ${fk.ref_table}(${fk.ref_columns.join(', ')}) ` +
        `on delete ${REFERENTIAL_ACTIONS[fk.on_delete] ?? fk.on_delete} on update ${REFERENTIAL_ACTIONS[fk.on_update] ?? fk.on_update}`,
    ),
  );
  mismatches.push(...diffSets(expectedForeignKeys, actualForeignKeys, 'foreign key'));

  // Enums, with their values in declaration order (the order PostgreSQL sorts them by).
  const expectedEnums = new Set(
    datamodel.enums.map((e) => `${e.dbName ?? e.name}(${e.values.map((v) => v.dbName ?? v.name).join(', ')})`),
  );
  const actualEnums = new Set(db.enums.map((e) => `${e.name}(${e.labels.join(', ')})`));
  mismatches.push(...diffSets(expectedEnums, actualEnums, 'enum'));

  return mismatches;
}
