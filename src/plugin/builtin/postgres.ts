/**
 * The PostgreSQL plugin (alias `postgres`): one row per group holding the group's current epoch and
 * its description as JSON text, through a bounded node-postgres pool. setTopology is an upsert: the
 * latest call wins whatever its epoch, as in Kafka's in-memory plugin, so superseded epochs are never
 * kept (a group that is deleted and re-created starts again at a lower epoch, so refusing to go
 * backwards would leave it unstorable).
 *
 * Every database failure (down, refusing connections, slow) is a transient failure and arrives within
 * the connect or query timeout; the pool replaces broken connections by itself, so the plugin recovers
 * when the database returns. The table is created on configure().
 *
 * The description is stored as `text`, not `jsonb`: jsonb rejects the escaped NUL character that
 * JSON.stringify produces for a name containing U+0000, which would make such a push fail forever.
 * Query it with `description::jsonb`.
 */
import { redactPostgresUrl } from '../../config/index.js'
import pg from 'pg'
import {
  type StreamsGroupTopologyDescription,
  type StreamsGroupTopologyDescriptionPlugin,
  StreamsTopologyDescriptionTransientFailureException,
} from '../spi.js'
import {
  checkEpoch,
  checkGroupId,
  decodeStored,
  encodeForSet,
  intConfig,
  maxDescriptionBytes,
} from './common.js'

import {
  POSTGRES_CONNECT_TIMEOUT_KEY,
  POSTGRES_POOL_SIZE_KEY,
  POSTGRES_QUERY_TIMEOUT_KEY,
  POSTGRES_TABLE_KEY,
  POSTGRES_URL_KEY,
} from './keys.js'

export {
  POSTGRES_CONNECT_TIMEOUT_KEY,
  POSTGRES_POOL_SIZE_KEY,
  POSTGRES_QUERY_TIMEOUT_KEY,
  POSTGRES_TABLE_KEY,
  POSTGRES_URL_KEY,
}
export const DEFAULT_POSTGRES_POOL_SIZE = 4
export const DEFAULT_POSTGRES_CONNECT_TIMEOUT_MS = 2_000
export const DEFAULT_POSTGRES_QUERY_TIMEOUT_MS = 5_000
export const DEFAULT_POSTGRES_TABLE = 'topograph_topology_descriptions'

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

function transient(message: string, cause?: unknown): StreamsTopologyDescriptionTransientFailureException {
  return new StreamsTopologyDescriptionTransientFailureException(message, { cause })
}

function errorText(e: unknown): string {
  if (e instanceof Error) {
    // node-postgres reports a refused connection as an AggregateError with an empty message.
    if (e.message !== '') return e.message
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') return code
    if (e instanceof AggregateError && e.errors.length > 0) return errorText(e.errors[0])
    return e.name
  }
  return String(e)
}

export class PostgresTopologyDescriptionPlugin implements StreamsGroupTopologyDescriptionPlugin {
  #pool: pg.Pool | null = null
  #table = `"${DEFAULT_POSTGRES_TABLE}"`
  #maxDescriptionBytes = maxDescriptionBytes({})
  #closed = false
  /** The last error of an idle connection; kept only for diagnostics. */
  #lastIdleError: Error | null = null

  async configure(configs: Readonly<Record<string, string>>): Promise<void> {
    const url = configs[POSTGRES_URL_KEY]?.trim()
    if (!url)
      throw new Error(`Missing configuration ${POSTGRES_URL_KEY}: the postgres plugin needs a database URL`)
    const poolSize = intConfig(configs, POSTGRES_POOL_SIZE_KEY, DEFAULT_POSTGRES_POOL_SIZE, 1, 1000)
    const connectTimeout = intConfig(
      configs,
      POSTGRES_CONNECT_TIMEOUT_KEY,
      DEFAULT_POSTGRES_CONNECT_TIMEOUT_MS,
      1,
    )
    const queryTimeout = intConfig(configs, POSTGRES_QUERY_TIMEOUT_KEY, DEFAULT_POSTGRES_QUERY_TIMEOUT_MS, 1)
    const table = configs[POSTGRES_TABLE_KEY]?.trim() || DEFAULT_POSTGRES_TABLE
    if (!IDENTIFIER.test(table)) {
      throw new Error(
        `Invalid value ${table} for configuration ${POSTGRES_TABLE_KEY}: must be a plain SQL identifier (letters, digits, _; at most 63)`,
      )
    }
    this.#maxDescriptionBytes = maxDescriptionBytes(configs)
    this.#table = `"${table}"`
    const pool = new pg.Pool({
      connectionString: url,
      max: poolSize,
      // Also bounds the wait for a free pooled connection, so a saturated pool fails instead of queueing forever.
      connectionTimeoutMillis: connectTimeout,
      // Client-side bound for a query whose connection went silent; the server-side bound cancels it there.
      query_timeout: queryTimeout,
      statement_timeout: queryTimeout,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      application_name: 'topograph-topology-descriptions',
    })
    // An idle connection that the server drops (restart, failover) emits 'error' on the pool; without a
    // listener that would crash the process. The pool discards the connection and opens a new one later.
    pool.on('error', (e) => {
      this.#lastIdleError = e
    })
    try {
      await this.#createTable(pool)
    } catch (e) {
      await pool.end().catch(() => undefined)
      throw new Error(
        `Cannot prepare the PostgreSQL topology description store at ${redactPostgresUrl(url)}: ${errorText(e)}`,
        {
          cause: e,
        },
      )
    }
    this.#pool = pool
  }

  async #createTable(pool: pg.Pool): Promise<void> {
    const ddl = `CREATE TABLE IF NOT EXISTS ${this.#table} (
      group_id text PRIMARY KEY,
      topology_epoch integer NOT NULL,
      description text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
    try {
      await pool.query(ddl)
    } catch (e) {
      // Two processes creating the table at the same moment: one of them sees a unique violation on the
      // catalog even with IF NOT EXISTS. The table exists afterwards, so a second attempt succeeds.
      const code = (e as { code?: unknown }).code
      if (code !== '23505' && code !== '42P07') throw e
      await pool.query(ddl)
    }
  }

  /** The last error an idle pooled connection reported (diagnostics), or null. */
  get lastIdleError(): Error | null {
    return this.#lastIdleError
  }

  #open(): pg.Pool {
    if (this.#closed) throw transient('The PostgreSQL topology description plugin is closed.')
    if (this.#pool === null) throw transient('The PostgreSQL topology description plugin is not configured.')
    return this.#pool
  }

  async #query<R extends pg.QueryResultRow>(
    what: string,
    text: string,
    values: readonly unknown[],
  ): Promise<pg.QueryResult<R>> {
    const pool = this.#open()
    try {
      return await pool.query<R>(text, values as unknown[])
    } catch (e) {
      throw transient(`PostgreSQL ${what} failed: ${errorText(e)}`, e)
    }
  }

  async setTopology(
    groupId: string,
    topologyEpoch: number,
    description: StreamsGroupTopologyDescription,
  ): Promise<void> {
    this.#open()
    const { json } = encodeForSet(groupId, topologyEpoch, description, this.#maxDescriptionBytes)
    await this.#query(
      'write',
      `INSERT INTO ${this.#table} (group_id, topology_epoch, description) VALUES ($1, $2, $3)
       ON CONFLICT (group_id) DO UPDATE
         SET topology_epoch = EXCLUDED.topology_epoch, description = EXCLUDED.description, updated_at = now()`,
      [groupId, topologyEpoch, json],
    )
  }

  async getTopology(groupId: string, topologyEpoch: number): Promise<StreamsGroupTopologyDescription | null> {
    this.#open()
    checkGroupId(groupId)
    checkEpoch(topologyEpoch)
    const r = await this.#query<{ description: string }>(
      'read',
      `SELECT description FROM ${this.#table} WHERE group_id = $1 AND topology_epoch = $2`,
      [groupId, topologyEpoch],
    )
    const row = r.rows[0]
    if (row === undefined) return null
    return decodeStored(row.description, groupId, (m) => transient(m))
  }

  async deleteTopology(groupId: string): Promise<void> {
    this.#open()
    checkGroupId(groupId)
    await this.#query('delete', `DELETE FROM ${this.#table} WHERE group_id = $1`, [groupId])
  }

  async close(): Promise<void> {
    this.#closed = true
    const pool = this.#pool
    this.#pool = null
    await pool?.end()
  }
}

export default PostgresTopologyDescriptionPlugin
