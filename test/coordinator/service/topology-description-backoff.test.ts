// The solicitation back-off (kip1331-broker.md §1.2, §2): Kafka's delays and the arm/extend/clear rules.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  BACKOFF_MAX_MS,
  backoffDelayMs,
  KAFKA_BACKOFF,
  TopologyDescriptionBackoff,
} from '../../../src/coordinator/service/topology-description-backoff.js'

describe('topology-description back-off', () => {
  it('delays: 30 s doubling to 1 h, ±20 % jitter, capped', () => {
    const mid = () => 0.5
    assert.deepEqual(
      [0, 1, 2, 6, 7, 20].map((a) => backoffDelayMs(KAFKA_BACKOFF, a, mid)),
      [30_000, 60_000, 120_000, 1_920_000, BACKOFF_MAX_MS, BACKOFF_MAX_MS],
    )
    assert.equal(
      backoffDelayMs(KAFKA_BACKOFF, 0, () => 0),
      24_000,
    )
    assert.equal(
      backoffDelayMs(KAFKA_BACKOFF, 0, () => 0.999999),
      35_999,
    )
    assert.equal(
      backoffDelayMs(KAFKA_BACKOFF, 10, () => 0.999999),
      BACKOFF_MAX_MS,
    )
  })

  it('armIfNotActive: one flag per window per epoch; attempts grow for the same epoch, restart for another', () => {
    let now = 0
    const b = new TopologyDescriptionBackoff({ now: () => now, random: () => 0.5 })
    assert.equal(b.armIfNotActive('g', 0), true)
    assert.equal(b.armIfNotActive('g', 0), false)
    now = 29_999
    assert.equal(b.armIfNotActive('g', 0), false)
    // Another epoch is never held back by this window.
    assert.equal(b.isActive('g', 1), false)
    now = 30_000
    assert.equal(b.armIfNotActive('g', 0), true)
    assert.deepEqual(b.entry('g'), { topologyEpoch: 0, attempts: 1, nextAttemptMs: 90_000 })
    assert.equal(b.armIfNotActive('g', 1), true)
    assert.deepEqual(b.entry('g'), { topologyEpoch: 1, attempts: 0, nextAttemptMs: 60_000 })
  })

  it('armOrExtend ignores an active window but keeps a newer epoch; clear and clearGroup', () => {
    let now = 0
    const b = new TopologyDescriptionBackoff({ now: () => now, random: () => 0.5 })
    b.armIfNotActive('g', 1)
    b.armOrExtend('g', 0)
    assert.equal(b.entry('g')?.topologyEpoch, 1)
    now = 10
    b.armOrExtend('g', 1)
    assert.deepEqual(b.entry('g'), { topologyEpoch: 1, attempts: 1, nextAttemptMs: 60_010 })
    b.clear('g', 0)
    assert.ok(b.entry('g'))
    b.clear('g', 1)
    assert.equal(b.entry('g'), undefined)
    b.armIfNotActive('g', 3)
    b.clearGroup('g')
    assert.equal(b.size, 0)
  })
})
