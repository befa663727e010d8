// Which quota applies to a request (Kafka's precedence of user, client-id and default entities),
// which requests share a rate, and the stored records replayed after a restart; on the memory
// record store, no sockets.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { GROUP_CONFIG_LOG_ID } from '../../../src/coordinator/service/group-config-manager.js'
import { createRecordStore } from '../../../src/coordinator/storage/index.js'
import { createLogger } from '../../../src/server/logger.js'
import {
  ClientQuotas,
  decodeClientQuotaKey,
  encodeClientQuotaKey,
} from '../../../src/server/quotas/client-quotas.js'

const rate = { samples: 11, windowMs: 1000 }
const logger = createLogger({ level: 'silent' })

async function quotas() {
  const store = createRecordStore('memory', '.')
  await store.open()
  return { store, q: await ClientQuotas.load({ store, logger, rate, resolveHost: async () => true }) }
}

type E = { entityType: string; entityName: string | null }
const u = (n: string | null): E => ({ entityType: 'user', entityName: n })
const c = (n: string | null): E => ({ entityType: 'client-id', entityName: n })

/** A bound is found by the throttle it gives: 10000 bytes over the 10 s window is 1000/s. */
function appliedBound(q: ClientQuotas, user: string, clientId: string, t: number): number | null {
  // 10000 bytes at t: rate 1000/s; throttle = (1000 − b) / b × 10000 → b = 1000 × 10000 / (throttle + 10000).
  const throttle = q.recordAndThrottleMs('produce', user, clientId, 10_000, t)
  return throttle === 0 ? null : Math.round((1000 * 10_000) / (throttle + 10_000))
}

describe('client quota precedence', () => {
  it("takes the most specific entity, in Kafka's order", async () => {
    const { q } = await quotas()
    const levels: [E[], number][] = [
      [[c(null)], 10],
      [[c('app')], 20],
      [[u(null)], 30],
      [[u(null), c(null)], 40],
      [[u(null), c('app')], 50],
      [[u('alice')], 60],
      [[u('alice'), c(null)], 70],
      [[u('alice'), c('app')], 80],
    ]
    // Added from least to most specific; after each, alice/app sees the one just added.
    let t = 0
    for (const [entity, bound] of levels) {
      const [r] = await q.alter(
        [{ entity, ops: [{ key: 'producer_byte_rate', value: bound, remove: false }] }],
        false,
      )
      assert.equal(r.errorCode, 0)
      t += 100_000 // a fresh rate each time: the old samples have expired
      assert.equal(appliedBound(q, 'alice', 'app', t), bound, JSON.stringify(entity))
    }
    // Removed from most to least specific: each removal uncovers the next level.
    for (let i = levels.length - 1; i > 0; i--) {
      await q.alter(
        [{ entity: levels[i][0], ops: [{ key: 'producer_byte_rate', value: 0, remove: true }] }],
        false,
      )
      t += 100_000
      assert.equal(appliedBound(q, 'alice', 'app', t), levels[i - 1][1])
    }
  })

  it('an empty client id matches no client-id entity; no quota means no measuring', async () => {
    const { q } = await quotas()
    assert.equal(q.enabled('produce'), false)
    assert.equal(q.recordAndThrottleMs('produce', 'bob', 'x', 1e9, 0), 0)
    await q.alter(
      [{ entity: [c(null)], ops: [{ key: 'producer_byte_rate', value: 10, remove: false }] }],
      false,
    )
    assert.equal(q.recordAndThrottleMs('produce', 'bob', '', 1e9, 0), 0)
    assert.ok(q.recordAndThrottleMs('produce', 'bob', 'x', 1e9, 0) > 0)
  })

  it('a users/<user> rate is shared by the client ids of the user; users/<user>/clients/<default> is not', async () => {
    const { q } = await quotas()
    await q.alter(
      [{ entity: [u('alice')], ops: [{ key: 'producer_byte_rate', value: 1000, remove: false }] }],
      false,
    )
    // 9000 bytes from one client id, 9000 from another: together above 1000/s over 10 s.
    assert.equal(q.recordAndThrottleMs('produce', 'alice', 'a', 9000, 0), 0)
    assert.ok(q.recordAndThrottleMs('produce', 'alice', 'b', 9000, 0) > 0)
    await q.alter(
      [{ entity: [u('carol'), c(null)], ops: [{ key: 'producer_byte_rate', value: 1000, remove: false }] }],
      false,
    )
    assert.equal(q.recordAndThrottleMs('produce', 'carol', 'a', 9000, 0), 0)
    assert.equal(q.recordAndThrottleMs('produce', 'carol', 'b', 9000, 0), 0)
  })

  it('request_percentage throttles at most one window', async () => {
    const { q } = await quotas()
    await q.alter(
      [{ entity: [u(null)], ops: [{ key: 'request_percentage', value: 1, remove: false }] }],
      false,
    )
    assert.equal(q.recordAndThrottleMs('request', 'x', 'y', 1e6, 0), 1000)
  })
})

describe('client quota records', () => {
  it('round-trip their key; are replayed after a restart; sit beside other records of the log', async () => {
    const entity = new Map<string, string | null>([
      ['user', 'alice'],
      ['client-id', null],
    ])
    const decoded = decodeClientQuotaKey(encodeClientQuotaKey(entity, 'producer_byte_rate'))
    assert.deepEqual([...decoded.entity].sort(), [...entity].sort())
    assert.equal(decoded.key, 'producer_byte_rate')

    const { store, q } = await quotas()
    await q.alter(
      [
        { entity: [u('alice'), c(null)], ops: [{ key: 'producer_byte_rate', value: 5, remove: false }] },
        { entity: [u('bob')], ops: [{ key: 'consumer_byte_rate', value: 6, remove: false }] },
      ],
      false,
    )
    await q.alter(
      [{ entity: [u('bob')], ops: [{ key: 'consumer_byte_rate', value: 0, remove: true }] }],
      false,
    )
    const again = await ClientQuotas.load({ store, logger, rate })
    assert.deepEqual(again.describe([], false), [
      {
        entity: [
          { entityType: 'client-id', entityName: null },
          { entityType: 'user', entityName: 'alice' },
        ],
        values: [{ key: 'producer_byte_rate', value: 5 }],
      },
    ])
    // One append per alteration with changes, in the dynamic-config log.
    assert.equal((await store.load(GROUP_CONFIG_LOG_ID)).length >= 2, true)
  })
})

describe('byte-rate throttle', () => {
  it('is capped to what ThrottleTimeMs and a timer can hold', async () => {
    const { q } = await quotas()
    await q.alter(
      [{ entity: [u(null)], ops: [{ key: 'producer_byte_rate', value: 1, remove: false }] }],
      false,
    )
    assert.equal(q.recordAndThrottleMs('produce', 'x', 'y', 1e12, 0), 2147483647)
  })
})
