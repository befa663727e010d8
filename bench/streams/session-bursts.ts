// How a shard's session-timer firings spread over time when every member's session started at the
// same moment (as every member of a shard loaded after a restart): `members` members (one a group)
// join at 0 through the real runtime (test/testkit, a manual clock), then heartbeat every 5 s, each
// on its own phase (member i at i × 5000 / members ms) with a deterministic jitter of up to ±1 ms,
// for `minutes` minutes, at the product's 45-s session timeout. A firing is seen as its re-arm (the
// member's slot's due time moving; a steady heartbeat moves only the soft deadline). Prints, for each
// minute, the firings and the most in any one second and in any 5-s window.
//
//   node --import tsx bench/streams/session-bursts.ts [members=1000] [minutes=6]
import {
  Harness,
  heartbeatRequest,
  joinRequest,
  NO_DELAY,
  topicsImage,
} from '../../test/coordinator/shard/streams/harness.js'

const [members, minutes] = [1000, 6].map((d, i) => Number(process.argv[2 + i] ?? d)) as [number, number]
if (!(members > 0 && minutes > 0)) throw new Error('usage: session-bursts.ts [members>0] [minutes>0]')
const h = await Harness.start(topicsImage({ foo: 2 }))
const epochs: number[] = []
for (let i = 0; i < members; i++) {
  const r = await h.heartbeat(joinRequest({ groupId: `g${i}`, memberId: `m${i}` }), NO_DELAY)
  epochs.push(r.response.memberEpoch)
}
let seed = 0x9e3779b9
const jitter = () => {
  seed ^= seed << 13
  seed ^= seed >>> 17
  seed ^= seed << 5
  return ((seed >>> 0) % 3) - 1
}
const slots = Array.from({ length: members }, (_, i) => h.manager.group(`g${i}`)!.slot(`m${i}`)!)
let due = slots.map((s) => s.dueMs)
const firesPerSecond: number[] = []
const endMs = minutes * 60_000
for (let second = 1; second * 1000 <= endMs; second++) {
  // The heartbeats of this second, in time order, each through the runtime.
  const beats: { at: number; i: number }[] = []
  for (let i = 0; i < members; i++) {
    const phase = Math.floor((i * 5000) / members)
    const k = Math.max(1, Math.ceil(((second - 1) * 1000 - phase) / 5000))
    const at = phase + 5000 * k
    if (at < second * 1000) beats.push({ at: at + jitter(), i })
  }
  beats.sort((a, b) => a.at - b.at)
  for (const b of beats) {
    if (b.at > h.nowMs) await h.advance(b.at - h.nowMs)
    const r = await h.heartbeat(
      heartbeatRequest({
        groupId: `g${b.i}`,
        memberId: `m${b.i}`,
        memberEpoch: epochs[b.i]!,
        endpointInformationEpoch: 0,
        activeTasks: null,
        standbyTasks: null,
        warmupTasks: null,
      }),
      NO_DELAY,
    )
    if (r.response.errorCode !== 0) throw new Error(`m${b.i}: error ${r.response.errorCode}`)
  }
  await h.advance(second * 1000 - h.nowMs)
  let fired = 0
  for (let i = 0; i < members; i++) if (slots[i]!.dueMs !== due[i]) fired++
  due = slots.map((s) => s.dueMs)
  firesPerSecond.push(fired)
}
for (let m = 0; m < minutes; m++) {
  const s = firesPerSecond.slice(m * 60, m * 60 + 60)
  let max5 = 0
  for (let k = 0; k + 5 <= s.length; k++)
    max5 = Math.max(
      max5,
      s.slice(k, k + 5).reduce((a, b) => a + b, 0),
    )
  console.log(
    `minute ${m}: ${s.reduce((a, b) => a + b, 0)} firings, most in a second ${Math.max(...s)}, in 5 s ${max5}`,
  )
}
await h.close()
