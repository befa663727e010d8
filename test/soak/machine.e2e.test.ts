// The soak's loopback probe: a round trip on a loopback connection comes back and is timed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LoopbackProbe } from '../../tools/soak/machine.js'

test('LoopbackProbe: a round trip comes back, one at a time', async () => {
  const probe = await LoopbackProbe.open()
  try {
    const first = probe.roundTripUs()
    await assert.rejects(probe.roundTripUs(), /already under way/)
    const us = await first
    assert.ok(us > 0, `${us} µs`)
    assert.ok((await probe.roundTripUs()) > 0)
  } finally {
    probe.close()
  }
})
