/**
 * A statement written with named parameters (`:name`, each with its cast: `:tenantId::uuid`) in
 * the form pg sends: `$1`, `$2`... numbered by first use, and the names in that order, which lay
 * out each execution's values. A statement built in variants (parts left out) then numbers each
 * variant's own parameters, and PostgreSQL never meets one it cannot type: each must be cast.
 * Quotes and comments are not parsed, so none may hold `:word`.
 */
export interface NumberedStatement {
  text: string;
  names: string[];
}

const NAMED = /(?<![:\w]):([a-zA-Z]\w*)/g;

export function numberParameters(sql: string): NumberedStatement {
  const names: string[] = [];
  const text = sql.replace(NAMED, (_match, name: string, offset: number) => {
    if (!sql.startsWith('::', offset + name.length + 1)) throw new Error(`parameter :${name} has no cast`);
    const known = names.indexOf(name);
    return `$${known >= 0 ? known + 1 : names.push(name)}`;
  });
  return { text, names };
}

/** The values of `statement`'s parameters, in its order, from `values` by name (every one given). */
export function parameterValues(statement: NumberedStatement, values: Record<string, unknown>): unknown[] {
  return statement.names.map((name) => {
    if (!Object.hasOwn(values, name)) throw new Error(`no value for the statement's parameter :${name}`);
    return values[name];
  });
}
