// A shard reloaded after a restart keeps state built from records decoded from the store; a live
// shard, from the records its handlers returned. Both go through `replay`, and the objects they
// build must have the same hidden classes (V8's maps): a heartbeat's code optimised for one shape
// turns polymorphic, or slower, on another. `%HaveSameMap` is V8's own test of that, allowed here
// by setting --allow-natives-syntax before the function that uses it is compiled.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { Harness, heartbeatRequest, joinRequest, newManager, topicsImage } from './harness.js'

setFlagsFromString('--allow-natives-syntax')
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean

test('state replayed from the store has the maps of state built live', async () => {
  // Builds streams groups with live heartbeats through the real runtime, replays the records as a
  // load decodes them from the store into a fresh manager, and collects every path of the state
  // whose object has another map in the two managers.
  const image = topicsImage({ foo: 8 })
  const h = await Harness.start(image)
  // Groups of 10 and of 3 members (a table's slots in a Map, and in an array), reconciled; enough of
  // them that the live process has made objects past the first few of each kind.
  const sizes = [10, ...Array.from({ length: 11 }, () => 3)]
  const epochs = new Map<string, number>()
  for (let g = 0; g < sizes.length; g++) {
    for (let i = 0; i < sizes[g]!; i++) {
      const r = await h.heartbeat(
        joinRequest({
          groupId: `g${g}`,
          memberId: `member-${g}-${i}`,
          processId: `process-${g}-${i}`,
        }),
      )
      epochs.set(`member-${g}-${i}`, r.response.memberEpoch)
    }
  }
  for (let round = 0; round < 3; round++) {
    h.nowMs = h.nowMs + 5000
    for (let g = 0; g < sizes.length; g++) {
      for (let i = 0; i < sizes[g]!; i++) {
        const memberId = `member-${g}-${i}`
        const r = await h.heartbeat(
          heartbeatRequest({ groupId: `g${g}`, memberId, memberEpoch: epochs.get(memberId)! }),
        )
        epochs.set(memberId, r.response.memberEpoch)
      }
    }
  }

  const live = h.manager
  const replayed = newManager(image)
  for (const record of await h.t.log()) replayed.replay(record)

  const differing: Record<string, number> = {}
  const seen = new Set<object>()
  /** Walks both states side by side: own properties, prototype getters, Map values, array elements. */
  function walk(a: unknown, b: unknown, path: string, depth: number): void {
    if (depth > 6 || typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return
    if (seen.has(a)) return
    seen.add(a)
    if (!haveSameMap(a, b)) differing[path] = (differing[path] ?? 0) + 1
    if (a instanceof Map && b instanceof Map) {
      const bs = [...b.values()]
      let i = 0
      for (const v of a.values()) walk(v, bs[i++], `${path}.<value>`, depth + 1)
      return
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.min(a.length, b.length); i++) walk(a[i], b[i], `${path}[]`, depth + 1)
      return
    }
    const names = new Set(Object.getOwnPropertyNames(a))
    for (let p = Object.getPrototypeOf(a); p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p))
      for (const [n, d] of Object.entries(Object.getOwnPropertyDescriptors(p))) if (d.get) names.add(n)
    for (const n of names) {
      const x = (a as Record<string, unknown>)[n]
      const y = (b as Record<string, unknown>)[n]
      walk(x, y, `${path}.${n}`, depth + 1)
    }
  }
  for (const id of live.groupIds()) {
    const a = live.group(id)!
    const b = replayed.group(id)!
    walk(a, b, 'group', 0)
    for (const memberId of a.members.keys()) {
      walk(a.slot(memberId), b.slot(memberId), 'slot', 0)
      walk(a.members.get(memberId), b.members.get(memberId), 'member', 0)
    }
  }
  await h.close()
  assert.deepEqual(differing, {})
})
