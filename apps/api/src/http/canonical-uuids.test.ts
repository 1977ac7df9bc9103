import { Type } from '@sinclair/typebox';
import { uuidCanonicaliser } from './canonical-uuids';

const ID = '3F2504E0-4F89-41D3-9A0C-0305E82C3301';
const id = ID.toLowerCase();

describe('uuidCanonicaliser', () => {
  const schema = Type.Object({
    hold_id: Type.String({ format: 'uuid' }),
    note: Type.String(),
    kind: Type.Union([Type.Literal('A'), Type.Literal('B')]),
    replaced_by: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    addons: Type.Array(Type.Object({ addon_id: Type.String({ format: 'uuid' }), qty: Type.Integer() })),
    ids: Type.Optional(Type.Array(Type.String({ format: 'uuid' }))),
    either: Type.Union([Type.String({ format: 'uuid' }), Type.String()]),
  });
  const canonicalise = uuidCanonicaliser(schema)!;

  it('when a value has uuids at any depth, then each is lower-cased in place and nothing else changes', () => {
    const value = {
      hold_id: ID,
      note: 'KEEP ME',
      kind: 'A',
      replaced_by: ID,
      addons: [{ addon_id: ID, qty: 2 }],
      ids: [ID, id],
      either: 'FREE TEXT',
    };
    expect(canonicalise(value)).toBe(value);
    expect(value).toEqual({
      hold_id: id,
      note: 'KEEP ME',
      kind: 'A',
      replaced_by: id,
      addons: [{ addon_id: id, qty: 2 }],
      ids: [id, id],
      // A union in which another branch takes any string is left as sent.
      either: 'FREE TEXT',
    });
    const nulls = { hold_id: ID, note: '', kind: 'B', replaced_by: null, addons: [], either: ID };
    canonicalise(nulls);
    expect(nulls).toEqual({ hold_id: id, note: '', kind: 'B', replaced_by: null, addons: [], either: ID });
  });

  it('when a field is in a union of objects, then it is lower-cased where every branch naming it says uuid', () => {
    const lines = uuidCanonicaliser(
      Type.Array(
        Type.Union([
          Type.Object({ kind: Type.Literal('wallet'), wallet_id: Type.String({ format: 'uuid' }), ref: Type.String() }),
          Type.Object({
            kind: Type.Literal('plan'),
            plan_id: Type.String({ format: 'uuid' }),
            ref: Type.String({ format: 'uuid' }),
          }),
        ]),
      ),
    )!;
    const value = [
      { kind: 'wallet', wallet_id: ID, ref: 'TILL-7' },
      { kind: 'plan', plan_id: ID, ref: ID },
    ];
    lines(value);
    // `ref` is free text in one branch, so it is left as sent in both.
    expect(value).toEqual([
      { kind: 'wallet', wallet_id: id, ref: 'TILL-7' },
      { kind: 'plan', plan_id: id, ref: ID },
    ]);
  });

  it('when a schema names no uuid, then there is nothing to run', () => {
    expect(uuidCanonicaliser(Type.Object({ email: Type.String(), tags: Type.Array(Type.String()) }))).toBeUndefined();
  });
});
