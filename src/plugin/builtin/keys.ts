/**
 * The configuration keys of the built-in topology-description plugins (`memory`, `sqlite`,
 * `postgres`), in a module of their own so that the server knows them without loading a plugin
 * (the postgres plugin's module loads the database driver). They reach the plugin's `configure()`
 * as every key does; the server does not log them as unknown keys.
 */
export const MAX_DESCRIPTION_BYTES_KEY = 'topology.description.max.bytes'
export const MEMORY_MAX_GROUPS_KEY = 'topology.description.memory.max.groups'
export const MEMORY_MAX_BYTES_KEY = 'topology.description.memory.max.bytes'
export const SQLITE_PATH_KEY = 'topology.description.sqlite.path'
export const POSTGRES_URL_KEY = 'topology.description.postgres.url'
export const POSTGRES_POOL_SIZE_KEY = 'topology.description.postgres.pool.size'
export const POSTGRES_CONNECT_TIMEOUT_KEY = 'topology.description.postgres.connect.timeout.ms'
export const POSTGRES_QUERY_TIMEOUT_KEY = 'topology.description.postgres.query.timeout.ms'
export const POSTGRES_TABLE_KEY = 'topology.description.postgres.table'

export const BUILTIN_PLUGIN_CONFIG_KEYS: ReadonlySet<string> = new Set([
  MAX_DESCRIPTION_BYTES_KEY,
  MEMORY_MAX_GROUPS_KEY,
  MEMORY_MAX_BYTES_KEY,
  SQLITE_PATH_KEY,
  POSTGRES_URL_KEY,
  POSTGRES_POOL_SIZE_KEY,
  POSTGRES_CONNECT_TIMEOUT_KEY,
  POSTGRES_QUERY_TIMEOUT_KEY,
  POSTGRES_TABLE_KEY,
])
