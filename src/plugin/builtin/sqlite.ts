/**
 * The SQLite plugin (alias `sqlite`): one row per group in a WAL-mode database file, holding the
 * group's current epoch and its description as JSON. setTopology is an upsert (the latest call wins,
 * whatever its epoch, as in Kafka's in-memory plugin), so superseded epochs are never kept.
 *
 * better-sqlite3 is synchronous: each call runs one prepared statement on the event loop. That is a
 * deliberate trade: a worker thread would add a message round trip (tens of microseconds) and a second
 * copy of every description to save a statement that itself takes tens of microseconds with
 * `synchronous=NORMAL` in WAL mode (measured in docs/plugins.md; bench/plugin/plugins.bench.ts).
 * The statement is the only synchronous work; nothing waits on locks for long (busy_timeout below).
 */
import { mkdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import Database from 'better-sqlite3'
import {
  type StreamsGroupTopologyDescription,
  type StreamsGroupTopologyDescriptionPlugin,
  StreamsTopologyDescriptionTransientFailureException,
} from '../spi.js'
import { checkEpoch, checkGroupId, decodeStored, encodeForSet, maxDescriptionBytes } from './common.js'

import { SQLITE_PATH_KEY } from './keys.js'

export { SQLITE_PATH_KEY }
export const SQLITE_DEFAULT_FILE = 'topology-descriptions.db'

/**
 * How long a statement may wait for another process's lock. It blocks the event loop while it waits,
 * so it is short; a longer lock gives a transient failure and the coordinator asks again later.
 */
const BUSY_TIMEOUT_MS = 50

/**
 * The connection's page cache (`cache_size`, negative: KiB): SQLite's own default. better-sqlite3
 * builds SQLite with −16000, and a connection keeps every page it writes or reads, so without this
 * the cache would grow with the table toward 16 MB; a description is read once per describe of a
 * group, from the operating system's page cache when it is not in this one.
 */
const PAGE_CACHE_SIZE = -2000

interface Statements {
  readonly upsert: Database.Statement<[string, number, string]>
  readonly select: Database.Statement<[string, number], { description: string }>
  readonly remove: Database.Statement<[string]>
}

function transient(message: string, cause?: unknown): StreamsTopologyDescriptionTransientFailureException {
  return new StreamsTopologyDescriptionTransientFailureException(message, { cause })
}

/** The file the plugin uses: the explicit path, else `<data.dir>/topology-descriptions.db`. */
export function sqlitePath(configs: Readonly<Record<string, string>>): string {
  const explicit = configs[SQLITE_PATH_KEY]?.trim()
  if (explicit) return resolve(explicit)
  const dataDir = configs['data.dir']?.trim() || './data'
  return resolve(join(dataDir, SQLITE_DEFAULT_FILE))
}

export class SqliteTopologyDescriptionPlugin implements StreamsGroupTopologyDescriptionPlugin {
  #db: Database.Database | null = null
  #statements: Statements | null = null
  #maxDescriptionBytes = maxDescriptionBytes({})
  #closed = false

  configure(configs: Readonly<Record<string, string>>): void {
    this.#maxDescriptionBytes = maxDescriptionBytes(configs)
    const path = sqlitePath(configs)
    let db: Database.Database | undefined
    try {
      mkdirSync(dirname(path), { recursive: true })
      db = new Database(path)
      db.pragma('journal_mode = WAL')
      // In WAL mode NORMAL loses no integrity on power loss, only the last commits; a lost
      // description is re-pushed (getTopology null → the coordinator re-solicits), so that is fine.
      db.pragma('synchronous = NORMAL')
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
      db.pragma(`cache_size = ${PAGE_CACHE_SIZE}`)
      db.exec(`CREATE TABLE IF NOT EXISTS topology_descriptions (
        group_id TEXT PRIMARY KEY NOT NULL,
        topology_epoch INTEGER NOT NULL,
        description TEXT NOT NULL
      )`)
      this.#statements = {
        upsert: db.prepare(
          `INSERT INTO topology_descriptions (group_id, topology_epoch, description) VALUES (?, ?, ?)
           ON CONFLICT (group_id) DO UPDATE SET topology_epoch = excluded.topology_epoch, description = excluded.description`,
        ),
        select: db.prepare(
          'SELECT description FROM topology_descriptions WHERE group_id = ? AND topology_epoch = ?',
        ),
        remove: db.prepare('DELETE FROM topology_descriptions WHERE group_id = ?'),
      }
      this.#db = db
    } catch (e) {
      db?.close()
      throw new Error(`Cannot open the SQLite topology description store ${path}: ${(e as Error).message}`, {
        cause: e,
      })
    }
  }

  /** The prepared statements, or a transient failure when the plugin is not open. */
  #open(): Statements {
    if (this.#closed) throw transient('The SQLite topology description plugin is closed.')
    if (this.#statements === null)
      throw transient('The SQLite topology description plugin is not configured.')
    return this.#statements
  }

  async setTopology(
    groupId: string,
    topologyEpoch: number,
    description: StreamsGroupTopologyDescription,
  ): Promise<void> {
    const s = this.#open()
    const { json } = encodeForSet(groupId, topologyEpoch, description, this.#maxDescriptionBytes)
    try {
      s.upsert.run(groupId, topologyEpoch, json)
    } catch (e) {
      throw transient(`SQLite write failed: ${(e as Error).message}`, e)
    }
  }

  async getTopology(groupId: string, topologyEpoch: number): Promise<StreamsGroupTopologyDescription | null> {
    const s = this.#open()
    checkGroupId(groupId)
    checkEpoch(topologyEpoch)
    let row: { description: string } | undefined
    try {
      row = s.select.get(groupId, topologyEpoch)
    } catch (e) {
      throw transient(`SQLite read failed: ${(e as Error).message}`, e)
    }
    if (row === undefined) return null
    return decodeStored(row.description, groupId, (m) => transient(m))
  }

  async deleteTopology(groupId: string): Promise<void> {
    const s = this.#open()
    checkGroupId(groupId)
    try {
      s.remove.run(groupId)
    } catch (e) {
      throw transient(`SQLite delete failed: ${(e as Error).message}`, e)
    }
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#statements = null
    const db = this.#db
    this.#db = null
    db?.close()
  }
}

export default SqliteTopologyDescriptionPlugin
