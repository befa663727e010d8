import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { COORDINATOR_EPOCH_FILE, nextCoordinatorEpoch } from '../../../src/server/data/coordinator-epoch.js'

describe('nextCoordinatorEpoch', () => {
  it('starts at 0, grows by one per call and keeps the last epoch in its file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'coordinator-epoch-'))
    try {
      assert.deepEqual(
        [0, 1, 2].map(() => nextCoordinatorEpoch(dir)),
        [0, 1, 2],
      )
      assert.equal(
        readFileSync(join(dir, COORDINATOR_EPOCH_FILE), 'utf8'),
        'version: 0\ncoordinator.epoch: 2\n',
      )
      assert.equal(existsSync(join(dir, `${COORDINATOR_EPOCH_FILE}.tmp`)), false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('stops at the largest int32; refuses a file that is not an epoch file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'coordinator-epoch-'))
    try {
      writeFileSync(join(dir, COORDINATOR_EPOCH_FILE), 'version: 0\ncoordinator.epoch: 2147483647\n')
      assert.equal(nextCoordinatorEpoch(dir), 2147483647)
      writeFileSync(join(dir, COORDINATOR_EPOCH_FILE), 'garbage')
      assert.throws(() => nextCoordinatorEpoch(dir), /is not a transaction coordinator epoch file/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('is 0 without a directory (memory logs)', () => {
    assert.equal(nextCoordinatorEpoch(null), 0)
  })
})
