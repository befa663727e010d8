import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { SqliteTopologyDescriptionPlugin, sqlitePath } from '../../../src/plugin/builtin/sqlite.js'
import { isPermanentFailure, isTransientFailure } from '../../../src/plugin/spi.js'
import { runPluginConformance, sampleTopologyDescription } from '../../../src/plugin/tck/index.js'

const dir = mkdtempSync(join(tmpdir(), 'topograph-sqlite-plugin-'))
after(() => rmSync(dir, { recursive: true, force: true }))

// Every plugin of the conformance run opens the same file, as consecutive coordinator runs would.
const shared = join(dir, 'tck', 'descriptions.db')
runPluginConformance(
  'sqlite',
  async () => {
    const p = new SqliteTopologyDescriptionPlugin()
    p.configure({ 'topology.description.sqlite.path': shared, 'topology.description.max.bytes': '100000' })
    return p
  },
  { maxDescriptionBytes: 100_000 },
)

describe('sqlite plugin', () => {
  test('the file defaults to <data.dir>/topology-descriptions.db and the directory is created', async () => {
    const dataDir = join(dir, 'data-dir', 'nested')
    assert.equal(sqlitePath({ 'data.dir': dataDir }), join(dataDir, 'topology-descriptions.db'))
    const p = new SqliteTopologyDescriptionPlugin()
    p.configure({ 'data.dir': dataDir })
    await p.setTopology('g', 1, sampleTopologyDescription())
    await p.close()
    assert.ok(existsSync(join(dataDir, 'topology-descriptions.db')))
  })

  test('an explicit path wins over data.dir; descriptions survive a reopen; the database is in WAL mode', async () => {
    const path = join(dir, 'explicit.db')
    const p1 = new SqliteTopologyDescriptionPlugin()
    p1.configure({ 'topology.description.sqlite.path': path, 'data.dir': join(dir, 'unused') })
    await p1.setTopology('g', 4, sampleTopologyDescription('kept'))
    await p1.setTopology('gone', 1, sampleTopologyDescription())
    await p1.deleteTopology('gone')
    await p1.close()
    assert.ok(!existsSync(join(dir, 'unused')))

    const p2 = new SqliteTopologyDescriptionPlugin()
    p2.configure({ 'topology.description.sqlite.path': path })
    assert.deepEqual(await p2.getTopology('g', 4), sampleTopologyDescription('kept'))
    await p2.close()

    const db = new Database(path, { readonly: true })
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal')
      const rows = db.prepare('SELECT group_id, topology_epoch FROM topology_descriptions').all()
      assert.deepEqual(rows, [{ group_id: 'g', topology_epoch: 4 }], 'one row per group, deleted groups gone')
    } finally {
      db.close()
    }
  })

  test('a corrupt stored row reads as a transient failure, not a crash', async () => {
    const path = join(dir, 'corrupt.db')
    const p = new SqliteTopologyDescriptionPlugin()
    p.configure({ 'topology.description.sqlite.path': path })
    await p.setTopology('g', 1, sampleTopologyDescription())
    const db = new Database(path)
    db.prepare("UPDATE topology_descriptions SET description = '{not json' WHERE group_id = 'g'").run()
    db.close()
    const e = await p.getTopology('g', 1).catch((x: unknown) => x)
    assert.ok(isTransientFailure(e))
    assert.match((e as Error).message, /group g is not valid JSON/)
    await p.close()
  })

  test('a description above topology.description.max.bytes is rejected permanently, naming the key', async () => {
    const p = new SqliteTopologyDescriptionPlugin()
    p.configure({
      'topology.description.sqlite.path': join(dir, 'small.db'),
      'topology.description.max.bytes': '100',
    })
    const e = await p.setTopology('g', 1, sampleTopologyDescription()).catch((x: unknown) => x)
    assert.ok(isPermanentFailure(e))
    assert.match(
      (e as Error).message,
      /larger than the maximum of 100 bytes \(topology\.description\.max\.bytes\)/,
    )
    await p.close()
  })

  test('a path that cannot be opened fails configure with the path in the message', () => {
    const blocker = join(dir, 'a-file')
    writeFileSync(blocker, 'x')
    const p = new SqliteTopologyDescriptionPlugin()
    assert.throws(
      () => p.configure({ 'topology.description.sqlite.path': join(blocker, 'db.sqlite') }),
      (e: Error) =>
        e.message.startsWith(
          `Cannot open the SQLite topology description store ${join(blocker, 'db.sqlite')}:`,
        ),
    )
  })

  test('calls before configure reject as transient instead of throwing', async () => {
    const p = new SqliteTopologyDescriptionPlugin()
    assert.ok(isTransientFailure(await p.getTopology('g', 1).catch((x: unknown) => x)))
  })
})
