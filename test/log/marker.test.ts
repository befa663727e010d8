// The transaction marker the coordinator builds, against the golden bytes of transactions.md §8.2.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { crc32c } from '../../src/log/compression.js'
import { DEFAULT_LOG_MANAGER_CONFIG } from '../../src/log/config.js'
import { createLogManager } from '../../src/log/manager.js'
import { txnMarker } from '../../src/log/marker.js'
import { MemoryLogStorage } from '../../src/log/memory.js'
import { batchOf, hex, records } from './helpers.js'

const NOW = 1700000000000
/** COMMIT, producer 1000, epoch 5, coordinator epoch 0, at 1700000000000, stored at offset 42. */
const GOLDEN =
  '000000000000002a' +
  '00000042' +
  '00000000' +
  '02' +
  '3ab8ddac' +
  '0030' +
  '00000000' +
  '0000018bcfe56800' +
  '0000018bcfe56800' +
  '00000000000003e8' +
  '0005' +
  'ffffffff' +
  '00000001' +
  // The record: length 16, attributes, timestamp and offset deltas, key length 4, key (version 0,
  // COMMIT), value length 6, value (version 0, coordinator epoch 0), no headers.
  '2000000008' +
  '00000001' +
  '0c' +
  '000000000000' +
  '00'

test('txnMarker builds the golden COMMIT marker; appendMarker stores it at the log end with leader epoch 0', async () => {
  const m = txnMarker(
    { producerId: 1000, producerEpoch: 5, committed: true, coordinatorEpoch: 0, timestamp: NOW },
    crc32c,
  )
  assert.equal(m.bytes.byteLength, 78)
  // Built: base offset 0 and no leader epoch (-1), which the CRC does not cover.
  assert.equal(hex(m.bytes.subarray(0, 16)), `0000000000000000${GOLDEN.slice(16, 24)}ffffffff`)
  assert.equal(hex(m.bytes.subarray(16)), GOLDEN.slice(32))

  const logs = createLogManager(
    { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: ['unused'] },
    { storage: new MemoryLogStorage(), noBackgroundJobs: true, clock: () => NOW },
  )
  await logs.open()
  try {
    await logs.createPartitions('t', 'id-t', 0, 1)
    const p = logs.partition('t', 0)!
    for (let i = 0; i < 42; i++) await p.append(batchOf(records(1)), { now: NOW })
    const r = await p.appendMarker(m, { now: NOW, transactionVersion: 2 })
    assert.equal(r.errorCode, 0)
    assert.equal(r.baseOffset, 42)
    const read = await p.read(42, 1 << 20, { minOneMessage: true, isolationLevel: 'read_uncommitted' })
    assert.equal(hex(read.records), GOLDEN)
  } finally {
    await logs.close()
  }
})
