import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  type GroupSpec,
  type MemberSubscriptionSpec,
  RangeAssignor,
  UniformAssignor,
} from '../../../../src/coordinator/shard/consumer/assignor/index.js'
import type { PartitionSet } from '../../../../src/coordinator/shard/consumer/partitions.js'

type Topics = Record<string, number>

const describer = (topics: Topics) => ({ numPartitions: (id: string) => topics[id] ?? -1 })

function spec(
  subscriptions: Record<string, readonly string[]>,
  current: Map<string, PartitionSet> = new Map(),
  instanceIds: Record<string, string> = {},
): GroupSpec {
  const members = new Map<string, MemberSubscriptionSpec>()
  let first: string | undefined
  let homogeneous = true
  for (const [id, subs] of Object.entries(subscriptions)) {
    const key = [...subs].sort().join(',')
    if (first === undefined) first = key
    else if (first !== key) homogeneous = false
    members.set(id, {
      instanceId: instanceIds[id] ?? null,
      rackId: null,
      subscribedTopicIds: new Set(subs),
      assignment: current.get(id) ?? new Map(),
    })
  }
  return { members, homogeneous }
}

const count = (set: PartitionSet | undefined): number => {
  let n = 0
  for (const ps of set?.values() ?? []) n += ps.size
  return n
}

/** Every partition of a subscribed topic goes to exactly one member subscribing to it. */
function assertComplete(group: GroupSpec, topics: Topics, result: Map<string, PartitionSet>): void {
  const owner = new Map<string, string>()
  for (const [memberId, set] of result) {
    const subs = group.members.get(memberId)!.subscribedTopicIds
    for (const [topic, ps] of set) {
      assert.ok(subs.has(topic), `${memberId} got ${topic} it does not subscribe to`)
      for (const p of ps) {
        const key = `${topic}-${p}`
        assert.ok(!owner.has(key), `${key} assigned twice`)
        assert.ok(p >= 0 && p < topics[topic]!, `${key} out of range`)
        owner.set(key, memberId)
      }
    }
  }
  for (const [topic, n] of Object.entries(topics)) {
    const subscribed = [...group.members.values()].some((m) => m.subscribedTopicIds.has(topic))
    for (let p = 0; p < n; p++) assert.equal(owner.has(`${topic}-${p}`), subscribed, `${topic}-${p}`)
  }
}

const topicsArb = fc
  .uniqueArray(fc.constantFrom('t0', 't1', 't2', 't3'), { minLength: 1, maxLength: 4 })
  .chain((names) =>
    fc.tuple(...names.map((n) => fc.integer({ min: 1, max: 12 }).map((p) => [n, p] as const))),
  )
  .map((entries) => Object.fromEntries(entries) as Topics)

describe('uniform assignor', () => {
  const assignor = new UniformAssignor()

  it('homogeneous: complete, balanced within one partition', () => {
    fc.assert(
      fc.property(topicsArb, fc.integer({ min: 1, max: 9 }), (topics, n) => {
        const subs = Object.fromEntries(Array.from({ length: n }, (_, i) => [`m${i}`, Object.keys(topics)]))
        const group = spec(subs)
        const result = assignor.assign(group, describer(topics))
        assertComplete(group, topics, result)
        const counts = [...group.members.keys()].map((id) => count(result.get(id)))
        assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `unbalanced ${counts}`)
      }),
    )
  })

  it('homogeneous: sticky when a member joins or leaves', () => {
    fc.assert(
      fc.property(topicsArb, fc.integer({ min: 2, max: 8 }), fc.boolean(), (topics, n, joins) => {
        const names = Object.keys(topics)
        const before = Object.fromEntries(Array.from({ length: n }, (_, i) => [`m${i}`, names]))
        const first = assignor.assign(spec(before), describer(topics))
        const after = { ...before }
        if (joins) after[`m${n}`] = names
        else delete after[`m${n - 1}`]
        const group = spec(after, first)
        const second = assignor.assign(group, describer(topics))
        assertComplete(group, topics, second)
        const total = Object.values(topics).reduce((a, b) => a + b, 0)
        const quota = Math.floor(total / group.members.size)
        for (const id of group.members.keys()) {
          const prev = first.get(id)
          if (prev === undefined) continue
          let keptCount = 0
          for (const [t, ps] of prev) for (const p of ps) if (second.get(id)?.get(t)?.has(p)) keptCount++
          assert.ok(keptCount >= Math.min(count(prev), quota), `${id} kept ${keptCount} of ${count(prev)}`)
        }
      }),
    )
  })

  it('heterogeneous: complete, and no partition can move to a subscriber with two fewer', () => {
    const subsArb = topicsArb.chain((topics) =>
      fc
        .array(fc.subarray(Object.keys(topics), { minLength: 1 }), { minLength: 1, maxLength: 7 })
        .map((lists) => ({ topics, subs: Object.fromEntries(lists.map((l, i) => [`m${i}`, l])) })),
    )
    fc.assert(
      fc.property(subsArb, ({ topics, subs }) => {
        const group = spec(subs)
        const result = assignor.assign({ ...group, homogeneous: false }, describer(topics))
        assertComplete(group, topics, result)
        for (const [from, set] of result) {
          for (const t of set.keys()) {
            for (const [to, m] of group.members) {
              if (m.subscribedTopicIds.has(t))
                assert.ok(count(result.get(to)) + 1 >= count(set), `${t} could move from ${from} to ${to}`)
            }
          }
        }
        // Sticky: the same input with the result as current assignment changes nothing.
        const again = assignor.assign({ ...spec(subs, result), homogeneous: false }, describer(topics))
        for (const id of group.members.keys()) assert.equal(count(again.get(id)), count(result.get(id)))
      }),
    )
  })
})

describe('range assignor', () => {
  it('gives each subscriber a contiguous range, the first ones one more', () => {
    const result = new RangeAssignor().assign(
      spec({ b: ['t0'], a: ['t0', 't1'], s: ['t0'] }, new Map(), { s: 'static' }),
      describer({ t0: 7, t1: 2 }),
    )
    // Static members first, then by member id.
    assert.deepEqual([...result.get('s')!.get('t0')!], [0, 1, 2])
    assert.deepEqual([...result.get('a')!.get('t0')!], [3, 4])
    assert.deepEqual([...result.get('b')!.get('t0')!], [5, 6])
    assert.deepEqual([...result.get('a')!.get('t1')!], [0, 1])
  })

  it('is complete and balanced per topic', () => {
    fc.assert(
      fc.property(topicsArb, fc.integer({ min: 1, max: 9 }), (topics, n) => {
        const subs = Object.fromEntries(Array.from({ length: n }, (_, i) => [`m${i}`, Object.keys(topics)]))
        const group = spec(subs)
        const result = new RangeAssignor().assign(group, describer(topics))
        assertComplete(group, topics, result)
        for (const t of Object.keys(topics)) {
          const sizes = [...group.members.keys()].map((id) => result.get(id)?.get(t)?.size ?? 0)
          assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1)
        }
      }),
    )
  })

  it('with instance ids, a rolling bounce (new member ids) keeps every instance’s partitions', () => {
    fc.assert(
      fc.property(
        topicsArb,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 1000 }),
        (topics, n, salt) => {
          const names = Object.keys(topics)
          const instances = Array.from({ length: n }, (_, i) => `instance-${i}`)
          const keyed = (prefix: string) => {
            const subs: Record<string, string[]> = {}
            const ids: Record<string, string> = {}
            instances.forEach((inst, i) => {
              // New member ids in an order unrelated to the instance ids.
              const id = `${prefix}-${(i * 7919 + salt) % 10007}`
              subs[id] = names
              ids[id] = inst
            })
            return { subs, ids }
          }
          const byInstance = (prefix: string) => {
            const { subs, ids } = keyed(prefix)
            const result = new RangeAssignor().assign(spec(subs, new Map(), ids), describer(topics))
            return new Map([...result].map(([id, set]) => [ids[id]!, set]))
          }
          assert.deepEqual(byInstance('before'), byInstance('after'))
        },
      ),
    )
  })
})
