/**
 * The PostgreSQL the tests run against. The test command starts one cluster for the whole run and
 * passes its URL (TOPOGRAPH_TEST_PG_URL) and a control script that stops and starts it
 * (TOPOGRAPH_TEST_PG_CTL). Each test file works in a schema or a table of its own, named here, so
 * files running at the same time never meet. Without a database a file fails (see
 * {@link requirePostgres}), never passes quietly.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import pg from 'pg'

export const PG_URL: string | undefined = process.env.TOPOGRAPH_TEST_PG_URL
export const PG_CTL: string | undefined = process.env.TOPOGRAPH_TEST_PG_CTL

const HOW =
  'Run the tests through `npm test`, or in bash: ' +
  'source scripts/lib/ensure.sh; source scripts/lib/pg-cluster.sh; pg_cluster_start'

/** Fails unless the database (and, with `ctl`, its control script) is there; returns its URL. */
export function requirePostgres(options: { readonly ctl?: boolean } = {}): string {
  assert.ok(PG_URL, `TOPOGRAPH_TEST_PG_URL is not set. ${HOW}`)
  if (options.ctl) assert.ok(PG_CTL, `TOPOGRAPH_TEST_PG_CTL is not set. ${HOW}`)
  return PG_URL
}

/** `prefix` and 12 random hex digits: a schema, table or application name no other file uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}${randomUUID().replaceAll('-', '').slice(0, 12)}`
}

/** Runs `f` with a connection of its own to the test database, closed afterwards. */
export async function withPgClient<T>(f: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: requirePostgres() })
  await c.connect()
  try {
    return await f(c)
  } finally {
    await c.end()
  }
}

export interface TestSchema {
  readonly schema: string
  /** The database URL with the schema as search_path (and `app` as application_name, unless asked not to). */
  readonly url: string
  /** application_name of every connection opened through `url` (when the URL sets it). */
  readonly app: string
}

/**
 * Creates a schema of its own (`prefix` + random id) and the URL that works in it. With
 * `applicationName: false` the URL leaves application_name to whoever connects (the store's own).
 */
export async function createTestSchema(
  prefix: string,
  options: { readonly password?: string; readonly applicationName?: boolean } = {},
): Promise<TestSchema> {
  const id = uniqueName('')
  const schema = `${prefix}${id}`
  await withPgClient((c) => c.query(`CREATE SCHEMA ${schema}`))
  const u = new URL(requirePostgres())
  if (options.password !== undefined) u.password = options.password
  u.searchParams.set('options', `-c search_path=${schema}`)
  if (options.applicationName !== false) u.searchParams.set('application_name', `tg-test-${id}`)
  return { schema, url: u.toString(), app: `tg-test-${id}` }
}

export async function dropTestSchema(schema: string): Promise<void> {
  await withPgClient((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`))
}

export async function dropTestTable(table: string): Promise<void> {
  await withPgClient((c) => c.query(`DROP TABLE IF EXISTS "${table}"`))
}
