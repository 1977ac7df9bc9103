export { loadConfig, ConfigError } from './load-config';
export type { Config } from './load-config';
