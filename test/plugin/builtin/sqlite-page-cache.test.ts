// The SQLite plugin bounds its connection's page cache. better-sqlite3 builds SQLite with a page
// cache of up to 16,000 KiB a connection, and the connection keeps every page it writes: without its
// `cache_size` the plugin's native memory grew about 16 MB over the 6,000 descriptions below. A file
// of its own, so that no memory an earlier test freed is there to be reused unseen.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { SqliteTopologyDescriptionPlugin } from '../../../src/plugin/builtin/sqlite.js'
import { sampleTopologyDescription } from '../../../src/plugin/tck/index.js'
import { PAGE_CACHE_GROWTH_LIMIT_KIB as LIMIT_KIB, nativeAnonymousKiB } from '../../helpers/native-memory.js'

const dir = mkdtempSync(join(tmpdir(), 'topograph-plugin-page-cache-'))
after(() => rmSync(dir, { recursive: true, force: true }))

test('the SQLite plugin keeps its page cache bounded', async () => {
  const plugin = new SqliteTopologyDescriptionPlugin()
  plugin.configure({ 'topology.description.sqlite.path': join(dir, 'plugin.db') })
  try {
    // About 24 MB of descriptions of 4 KB: every page of the table passes through the cache.
    const description = (i: number) => sampleTopologyDescription(`sink-${i}-${'x'.repeat(1700)}`)
    for (let i = 0; i < 1000; i++) await plugin.setTopology(`group-${i}`, 1, description(i))
    const before = nativeAnonymousKiB()
    for (let i = 1000; i < 7000; i++) await plugin.setTopology(`group-${i}`, 1, description(i))
    const kib = nativeAnonymousKiB() - before
    assert.ok(kib < LIMIT_KIB, `native memory grew ${kib} KiB over 6,000 descriptions (limit ${LIMIT_KIB})`)
    assert.deepEqual(await plugin.getTopology('group-6999', 1), description(6999))
  } finally {
    await plugin.close()
  }
})
