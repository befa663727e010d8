// The sampled rate behind client quotas, against Kafka's Rate/SampledStat arithmetic.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SampledRate } from '../../../src/server/quotas/rate.js'

describe('SampledRate', () => {
  const config = { samples: 11, windowMs: 1000 }

  it('measures a first burst over samples − 1 whole windows', () => {
    const r = new SampledRate(config)
    r.record(1000, 0)
    // 1000 over 10 s (10 windows assumed), not over 0 ms.
    assert.equal(r.measure(0), 100)
    assert.equal(r.windowSizeMs(500), 10_500)
  })

  it('throttle time: (rate − bound) / bound × window', () => {
    const r = new SampledRate(config)
    // 3000 bytes in 10 s of window is 300/s; at 100/s the excess takes (300 − 100) / 100 × 10 s.
    assert.equal(r.recordAndThrottleMs(3000, 100, 0), 20_000)
    const within = new SampledRate(config)
    assert.equal(within.recordAndThrottleMs(500, 100, 0), 0)
  })

  it('samples older than samples × window stop counting', () => {
    const r = new SampledRate({ samples: 2, windowMs: 1000 })
    r.record(100, 0)
    assert.equal(r.measure(1500), 100 / 1.5)
    // After 2 windows without events the sample is reset.
    assert.equal(r.measure(2000), 0)
  })

  it('a new sample starts once a window has passed, reusing the oldest beyond samples + 1', () => {
    const r = new SampledRate({ samples: 2, windowMs: 1000 })
    r.record(10, 0)
    r.record(10, 1000)
    r.record(10, 2000)
    r.record(10, 3000)
    // Kept: the samples whose last event is less than 2 s old (2000 and 3000).
    assert.equal(r.measure(3000), 20 / 1)
  })

  it('a negative value takes a recorded one back (the refused connection)', () => {
    const r = new SampledRate(config)
    r.record(1, 0)
    r.record(-1, 0)
    assert.equal(r.measure(0), 0)
  })
})
