export {
  loadConfig,
  ConfigError,
  DB_TIMEOUT_DEFAULTS,
  MAX_IDEMPOTENCY_TTL_SECONDS,
  REDIS_TIMEOUT_DEFAULTS,
} from './load-config';
export type { Config } from './load-config';
