import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import fc from 'fast-check'
import {
  MockAssignor,
  TaskAssignorException,
} from '../../../../../src/coordinator/shard/streams/assignor/index.js'
import { count, group, plain, topology } from './fixtures.js'

const mock = new MockAssignor()

describe('MockAssignor', () => {
  test('name is mock', () => {
    assert.equal(mock.name(), 'mock')
    assert.equal(String(mock), 'mock')
  })

  test('keeps current active tasks and gives each unowned task to the member with the fewest', () => {
    const spec = group(
      {
        a: { processId: 'p', active: { s1: [0, 1, 2] }, standby: { s1: [3] } },
        b: { processId: 'p', active: { s1: [3] } },
        c: { processId: 'q' },
      },
      2,
    )
    const result = mock.assign(spec, topology({ s1: [5, true], s2: [2, false] }))
    // Unowned in order s1_4, s2_0, s2_1. Counts a 3, b 1, c 0: s1_4 → c; b and c tie at 1 → b (smaller
    // id); s2_1 → c (1 against b's 2).
    assert.deepEqual(plain(result), {
      a: { active: { s1: [0, 1, 2] }, standby: {}, warmup: {} },
      b: { active: { s1: [3], s2: [0] }, standby: {}, warmup: {} },
      c: { active: { s1: [4], s2: [1] }, standby: {}, warmup: {} },
    })
  })

  test('a task claimed by two members fails', () => {
    const spec = group({
      a: { processId: 'p', active: { s: [1] } },
      b: { processId: 'q', active: { s: [1] } },
    })
    assert.throws(
      () => mock.assign(spec, topology({ s: [2, false] })),
      (e: unknown) =>
        e instanceof TaskAssignorException &&
        e.message === 'Task 1 of subtopology s is assigned to multiple members',
    )
  })

  test('a current task outside the topology fails', () => {
    const spec = group({ a: { processId: 'p', active: { s: [7] } } })
    assert.throws(() => mock.assign(spec, topology({ s: [2, false] })), TaskAssignorException)
  })

  test('no member for an unowned task fails', () => {
    assert.throws(
      () => mock.assign(group({}), topology({ s: [1, false] })),
      (e: unknown) =>
        e instanceof TaskAssignorException &&
        e.message === 'No member available to assign task 0 of subtopology s',
    )
  })

  test('fresh group: all tasks assigned once, counts differ by at most one, no standbys', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 20 }), { minKeys: 1 }),
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 8 }),
        (subs, ids) => {
          const describer = topology(
            Object.fromEntries(Object.entries(subs).map(([k, n]) => [k, [n, true] as const])),
          )
          const spec = group(Object.fromEntries(ids.map((id) => [id, { processId: 'p' }])), 1)
          const result = mock.assign(spec, describer)
          const seen = new Set<string>()
          for (const m of result.members.values()) {
            assert.equal(m.standbyTasks.size, 0)
            for (const [sub, ps] of m.activeTasks) {
              for (const p of ps) {
                assert.ok(!seen.has(`${sub}_${p}`))
                seen.add(`${sub}_${p}`)
              }
            }
          }
          assert.equal(
            seen.size,
            Object.values(subs).reduce((x, y) => x + y, 0),
          )
          const counts = [...result.members.values()].map((m) => count(m.activeTasks))
          assert.ok(Math.max(...counts) - Math.min(...counts) <= 1)
          assert.deepEqual(mock.assign(spec, describer), result)
        },
      ),
    )
  })
})
