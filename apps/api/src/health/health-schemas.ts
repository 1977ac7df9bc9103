import { Type, type Static } from '@sinclair/typebox';

export const Liveness = Type.Object({ status: Type.Literal('ok') }, { $id: 'Liveness' });
export type Liveness = Static<typeof Liveness>;

export const Readiness = Type.Object(
  {
    status: Type.Literal('ready'),
    checks: Type.Object({ postgres: Type.Literal('ok'), redis: Type.Literal('ok') }),
  },
  { $id: 'Readiness' },
);
export type Readiness = Static<typeof Readiness>;
