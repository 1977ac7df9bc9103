export { createPrismaClient } from './prisma-client';
export type { Db, Tx } from './prisma-client';
export { createPgPool } from './pg-pool';
export type { PgPool, PgPoolOptions } from './pg-pool';
export { numberParameters, parameterValues } from './named-parameters';
export type { NumberedStatement } from './named-parameters';
export { createRedis, redisScript } from './redis';
export type { Cluster, Redis, RedisClient, RedisNode, RedisOptions, RedisScript, RedisTarget } from './redis';
export { applyMigrations } from './migrations/apply-migrations';
export { seedDemoTenant } from './seed/demo-tenant';
export type { DemoTenant } from './seed/demo-tenant';
export { Prisma } from './generated/client';
export type {
  Membership,
  MembershipChange,
  MembershipFreeze,
  MembershipInvoice,
  MembershipPhoto,
  MembershipPlan,
  MembershipUsage,
  PlanBenefit,
} from './generated/client';
export { BookingStatus, ApiKeyRole } from './generated/enums';
export type {
  OrderChannel,
  OrderKind,
  OrderStatus,
  TenderType,
  TenderStatus,
  WalletEntryKind,
  WalletLotSource,
  WalletTokenKind,
  MembershipBilling,
  MembershipStatus,
  MembershipSource,
  UsageKind,
  UsageStatus,
  FreezeStatus,
  ChangeKind,
  ChangeTiming,
  ChangeStatus,
  RequestedBy,
  AllowancePeriod,
  PlanInterval,
} from './generated/enums';
