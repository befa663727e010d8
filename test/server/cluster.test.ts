// data.dir/meta.properties: the cluster id made once and read back, and a data directory that
// cannot be used named in the error, as Kafka's "Failed to create or validate data directory".
import assert from 'node:assert/strict'
import { constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { isLocalError } from '../../src/errors.js'
import { loadOrCreateClusterIdentity } from '../../src/server/cluster.js'

const root = mkdtempSync(join(tmpdir(), 'topograph-cluster-'))
after(() => rmSync(root, { recursive: true, force: true }))

describe('cluster identity', () => {
  it('is created once in a new data directory and read back after', () => {
    const dir = join(root, 'fresh', 'data')
    const first = loadOrCreateClusterIdentity(dir, 1)
    assert.equal(first.created, true)
    assert.match(
      readFileSync(join(dir, 'meta.properties'), 'utf8'),
      new RegExp(`cluster.id=${first.clusterId}`),
    )
    const again = loadOrCreateClusterIdentity(dir, 1)
    assert.deepEqual(again, { clusterId: first.clusterId, nodeId: 1, created: false })
  })

  it('a data directory that cannot be created is named, with the reason', () => {
    const file = join(root, 'a-file')
    writeFileSync(file, 'x')
    const dir = join(file, 'data')
    assert.throws(
      () => loadOrCreateClusterIdentity(dir, 1),
      (e: unknown) => {
        assert.ok(isLocalError(e, 'STORAGE_OPEN_FAILED'), String(e))
        assert.match(
          e.message,
          new RegExp(`^Failed to create or validate data directory ${dir} \\(data\\.dir\\): ENOTDIR`),
        )
        return true
      },
    )
  })

  it('an existing data directory that cannot be written (a read-only mount) is named, with the reason', () => {
    const dir = join(root, 'read-only')
    loadOrCreateClusterIdentity(dir, 1)
    const seen: [string, number][] = []
    const readOnly = (path: string, mode: number) => {
      seen.push([path, mode])
      throw Object.assign(new Error(`EROFS: read-only file system, access '${path}'`), { code: 'EROFS' })
    }
    assert.throws(
      () => loadOrCreateClusterIdentity(dir, 1, readOnly),
      (e: unknown) => {
        assert.ok(isLocalError(e, 'STORAGE_OPEN_FAILED'), String(e))
        assert.equal(
          e.message,
          `Failed to create or validate data directory ${dir} (data.dir): EROFS: read-only file system, access '${dir}'`,
        )
        return true
      },
    )
    assert.deepEqual(seen, [[dir, constants.W_OK]])
    // A writable one passes the same check.
    assert.equal(loadOrCreateClusterIdentity(dir, 1).created, false)
  })
})
