export { loadConfig, ConfigError, DB_TIMEOUT_DEFAULTS, REDIS_TIMEOUT_DEFAULTS } from './load-config';
export type { Config } from './load-config';
