import { numberParameters, parameterValues } from '../src/named-parameters';

describe('named statement parameters', () => {
  it('when names repeat and carry casts, then each is numbered by its first use and the casts stay', () => {
    const statement = numberParameters(
      `SELECT :b::int + :a::int, x::text, '{}'::jsonb FROM t WHERE id = :a::int AND y = :c::text`,
    );

    expect(statement.text).toBe(
      `SELECT $1::int + $2::int, x::text, '{}'::jsonb FROM t WHERE id = $2::int AND y = $3::text`,
    );
    expect(statement.names).toEqual(['b', 'a', 'c']);
  });

  it('when a parameter has no cast, then the statement is refused, since PostgreSQL could not always type it', () => {
    expect(() => numberParameters('SELECT :a::int WHERE y = :c')).toThrow(':c has no cast');
  });

  it('when values are laid out, then they follow the numbering, and a missing one throws rather than send undefined', () => {
    const statement = numberParameters('SELECT :b::int, :a::text, :b::int');

    expect(parameterValues(statement, { a: 'x', b: 2, unused: true })).toEqual([2, 'x']);
    expect(() => parameterValues(statement, { b: 2 })).toThrow(':a');
    expect(() => parameterValues(numberParameters('SELECT :toString::text'), {})).toThrow(':toString');
  });
});
