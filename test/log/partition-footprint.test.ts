// What an idle partition holds on the heap. A server may have max.partitions (100,000) of them, and
// most never see a producer or a listener, so their empty producer map, listener set, settled
// promises and callbacks are shared or made on first use (2.7 KB a partition when each had its own;
// about 1.1 KB now).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { DEFAULT_LOG_MANAGER_CONFIG } from '../../src/log/config.js'
import { createLogManager } from '../../src/log/manager.js'
import { MemoryLogStorage } from '../../src/log/memory.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import { batchOf, records } from './helpers.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

function heapAfterGc(): number {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

test('an idle partition costs under 1.5 KB of heap; one written to still works', async (t) => {
  const logs = createLogManager(
    { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: ['unused'] },
    { storage: new MemoryLogStorage(), noBackgroundJobs: true, clock: () => 1_700_000_000_000 },
  )
  await logs.open()
  try {
    const COUNT = 20_000
    const before = heapAfterGc()
    await logs.createPartitions('idle', 'id-idle', 0, COUNT)
    const perPartition = (heapAfterGc() - before) / COUNT
    assert.equal(logs.partitions('idle').length, COUNT)
    t.diagnostic(`${perPartition.toFixed(0)} bytes of heap per idle partition`)
    assert.ok(perPartition < 1500, `${perPartition.toFixed(0)} bytes of heap per idle partition`)

    // The shared empty state is never written through: a producer and a listener on one partition
    // are that partition's alone.
    const a = logs.partition('idle', 0) as PartitionLogImpl
    const b = logs.partition('idle', 1) as PartitionLogImpl
    const events: string[] = []
    a.addListener((e) => events.push(e))
    const r = await a.append(batchOf(records(2), { producerId: 7, producerEpoch: 0, baseSequence: 0 }), {
      now: 1_700_000_000_000,
    })
    assert.equal(r.errorCode, 0)
    assert.deepEqual(events, ['append'])
    assert.equal(a.producerStateManager.size, 1)
    assert.equal(b.producerStateManager.size, 0)
    assert.equal(b.producerStateManager.entry(7), undefined)
  } finally {
    await logs.close()
  }
})
