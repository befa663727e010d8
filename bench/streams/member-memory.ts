// Heap bytes per idle, stable streams group member, next to the bytes of that member's records as
// the store keeps them (key and value, serialized as the coordinator writes them).
//
// Shape: `members` members in groups of `perGroup` (Kafka Streams runs one member per stream thread,
// a few per application), one stateless subtopology reading a 20-partition topic, so 20 active tasks
// a group. The members join the real streams group manager (the shard's streams part, with Kafka's
// sticky assignor): every heartbeat's records are replayed into it as the runtime does, and each
// member heartbeats with the tasks it owns until its group is stable. Member ids, process ids and
// client ids have the shapes Kafka Streams gives them (a 22-character base64 id, a UUID, and
// "<application.id>-<process id>-StreamThread-<n>-consumer").
//
// Heap: `process.memoryUsage().heapUsed` (plus `arrayBuffers`, memory kept outside the JS heap)
// after full collections (--expose-gc), before the groups exist and after, with nothing but the
// manager holding them; the difference ÷ members. It counts the code compiled while the first
// members are built (about 1.8 MB, whatever the number of members), so a second figure is taken
// after a warm-up: the members dropped and the same number built again in a new manager. A third,
// the slope, has no fixed cost in it at all: in that second manager, the same number of members
// again (`members` more, 2 × `members` in all), the heap they add ÷ `members`. Records:
// every live record of the groups (the latest per key, which is what a compacted log keeps) through
// the coordinator's record serializer, split into each member's own three (member metadata, current
// assignment, target assignment member) and the group's (metadata, topology, target assignment
// metadata). Then a heap snapshot diff (v8.writeHeapSnapshot) of a smaller build (`breakdown`
// members, default 1,000) lists what a member is made of, by V8 object type and constructor.
//
//   node --expose-gc --import tsx bench/streams/member-memory.ts [members=10000] [perGroup=5] [breakdown=1000]
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeHeapSnapshot } from 'node:v8'
import {
  currentAssignmentRecord,
  groupMetadataRecordFrom,
  memberMetadataRecord,
  STREAMS_GROUP_CONFIG_DEFAULTS,
  type StreamsCoordinatorRecord,
  type StreamsGroupConfig,
  type StreamsGroupManager,
  targetAssignmentMemberRecord,
  targetAssignmentMetadataRecord,
  topologyRecord,
} from '../../src/coordinator/shard/streams/index.js'
import { encodeCoordinatorRecord } from '../../src/protocol/records.js'
import {
  APPLICATION,
  type MemberDriver,
  memberRequest,
  newManager,
  newMembers,
  PARTITIONS,
  untilStable,
} from './member-shape.js'

const members = Number(process.argv[2] ?? 10_000)
const perGroup = Number(process.argv[3] ?? 5)
const breakdownMembers = Number(process.argv[4] ?? 1_000)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) {
  console.error('run with --expose-gc: node --expose-gc --import tsx bench/streams/member-memory.ts')
  process.exit(2)
}
if (!(members > 0) || !(perGroup > 0) || members % perGroup !== 0 || !(breakdownMembers > 0)) {
  console.error('usage: member-memory.ts [members>0] [perGroup>0, divides members] [breakdown>0]')
  process.exit(2)
}

const CONFIG: StreamsGroupConfig = {
  ...STREAMS_GROUP_CONFIG_DEFAULTS,
  initialRebalanceDelayMs: 0,
  assignmentIntervalMs: 0,
}
type Driver = MemberDriver

/** One heartbeat through the manager, its records replayed as the runtime replays them. */
function heartbeat(manager: StreamsGroupManager, groupId: string, d: Driver, nowMs: number) {
  const result = manager.streamsGroupHeartbeat(
    { nowMs, requestApiVersion: 1, clientId: d.clientId, clientHost: '/10.0.0.7', config: CONFIG },
    memberRequest(groupId, d, -1),
  )
  for (const r of result.records) manager.replay(r)
  const res = result.response
  if (res.errorCode !== 0) throw new Error(`${d.memberId}: error ${res.errorCode} ${res.errorMessage}`)
  const changed = res.activeTasks !== null || res.memberEpoch !== d.epoch
  d.epoch = res.memberEpoch
  if (res.activeTasks !== null) d.active = res.activeTasks
  return changed
}

/** Builds `count` stable members in groups of `perGroup`; returns the group ids. */
function build(manager: StreamsGroupManager, count: number, tag: string): string[] {
  const groupIds: string[] = []
  let nowMs = 1_000_000
  for (let g = 0; g < count / perGroup; g++) {
    const groupId = `${APPLICATION}-${tag}${g}`
    groupIds.push(groupId)
    untilStable(groupId, newMembers(perGroup), (d) => heartbeat(manager, groupId, d, nowMs++))
  }
  return groupIds
}

/** Serialized bytes (key + value) of the live records of the groups: the members' and the groups'. */
function recordBytes(manager: StreamsGroupManager, groupIds: readonly string[]) {
  const size = (r: StreamsCoordinatorRecord) => {
    const e = encodeCoordinatorRecord(r)
    return e.key.length + (e.value?.length ?? 0)
  }
  let member = 0
  let group = 0
  const perType = new Map<string, number>()
  const add = (r: StreamsCoordinatorRecord, own: boolean) => {
    const n = size(r)
    if (own) member += n
    else group += n
    perType.set(r.type, (perType.get(r.type) ?? 0) + n)
  }
  for (const id of groupIds) {
    const g = manager.group(id)!
    add(groupMetadataRecordFrom(g, g.groupEpoch), false)
    if (g.topology !== null) add(topologyRecord(id, g.topology.value), false)
    add(targetAssignmentMetadataRecord(id, g.assignmentEpoch, g.assignmentTimestamp), false)
    for (const m of g.members.values()) {
      const target = g.targetAssignments.get(m.memberId)
      if (m.state !== 1 || m.memberEpoch !== g.groupEpoch || target === undefined)
        throw new Error(`${id}/${m.memberId} is not stable`)
      add(memberMetadataRecord(id, m), true)
      add(currentAssignmentRecord(id, m), true)
      add(targetAssignmentMemberRecord(id, m.memberId, target), true)
    }
  }
  return { member, group, perType }
}

/** `heapUsed` after full collections, and the bytes kept outside the JS heap (none expected). */
function heapAfterGc(): number {
  for (let i = 0; i < 4; i++) gc!()
  const u = process.memoryUsage()
  return u.heapUsed + u.arrayBuffers
}

/**
 * Builds `members` members in a new manager: heap per member, and the records of the first build.
 * In a function of its own, so nothing but its result outlives it (a reference left in the
 * caller's frame would keep a dropped manager alive).
 */
function measureBuild(tag: string, withRecords: boolean, slopeTag: string | null) {
  const manager = newManager()
  const before = heapAfterGc()
  const ids = build(manager, members, tag)
  const after = heapAfterGc()
  // The slope: `members` more in the same manager (2 × `members` in all), what they add ÷ `members`.
  let slope = Number.NaN
  if (slopeTag !== null) {
    // Group ids of the same length as the first `members`' (so are their strings).
    build(manager, members, slopeTag)
    slope = (heapAfterGc() - after) / members
  }
  return {
    perMember: (after - before) / members,
    slope,
    groups: ids.length,
    records: withRecords ? recordBytes(manager, ids) : null,
  }
}

// 1. Heap per member at `members`: the first build (the code that builds members is compiled
// meanwhile, and counted).
const first = measureBuild('g', true, null)
const records = first.records!
const heapPerMember = first.perMember
const groupCount = first.groups

// 1b. The same after a warm-up: the first build dropped, the same number of members built again
// in a new manager, so what the first build compiled is there before the "before" heap is taken
// and only the members' state is counted.
// 1c. The slope: in that manager, `members` more; the heap of 2 × `members` members minus the heap
// of `members`, ÷ `members`. What does not grow with the members (the manager, shared profiles
// and configs, code) is in neither difference.
const warm = measureBuild('w', false, 'x')
const warmPerMember = warm.perMember
const slopePerMember = warm.slope
const memberRecords = records.member / members
const groupRecordsPerMember = records.group / members
const f = (n: number) => Math.round(n).toLocaleString('en')

console.log(
  `${f(members)} members, ${f(groupCount)} groups of ${perGroup}, ${PARTITIONS} tasks a group (${PARTITIONS / perGroup} a member); Node ${process.version}\n`,
)
console.log('| Figure | bytes per member |')
console.log('| --- | ---: |')
console.log(
  `| 1. heap as first measured: all of the shard's streams state ÷ members, with the code compiled while building them | ${f(heapPerMember)} |`,
)
console.log(
  `| 2. heap after a warm-up: the same build again in a new manager (code already compiled) ÷ members | ${f(warmPerMember)} |`,
)
console.log(
  `| 3. slope: heap of ${f(2 * members)} members − heap of ${f(members)}, ÷ ${f(members)} (no fixed cost) | ${f(slopePerMember)} |`,
)
console.log(`| the member's own records, serialized (key + value) | ${f(memberRecords)} |`)
console.log(`| the group's records, serialized, ÷ members | ${f(groupRecordsPerMember)} |`)
console.log(
  `| heap as first measured ÷ the member's records | ${(heapPerMember / memberRecords).toFixed(2)}× |`,
)
console.log(
  `| heap as first measured ÷ (the member's records + its share of the group's) | ${(heapPerMember / (memberRecords + groupRecordsPerMember)).toFixed(2)}× |`,
)
console.log(
  `| heap after a warm-up ÷ the member's records | ${(warmPerMember / memberRecords).toFixed(2)}× |`,
)
console.log(`| slope ÷ the member's records | ${(slopePerMember / memberRecords).toFixed(2)}× |`)
console.log('\n| Record | serialized bytes per member |')
console.log('| --- | ---: |')
for (const [type, n] of records.perType) console.log(`| ${type} | ${f(n / members)} |`)

// 2. What a member is made of: a heap snapshot before and after a smaller build, diffed.
heapAfterGc()

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }
  nodes: number[]
  strings: string[]
}
/** Self size and count by (V8 node type, name) — the name is the constructor for objects. */
function summarize(file: string): Map<string, { count: number; size: number }> {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot
  rmSync(file)
  const fields = s.snapshot.meta.node_fields
  const types = s.snapshot.meta.node_types[0]
  const width = fields.length
  const iType = fields.indexOf('type')
  const iName = fields.indexOf('name')
  const iSize = fields.indexOf('self_size')
  const out = new Map<string, { count: number; size: number }>()
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + iType]]
    const name = type === 'object' || type === 'native' ? s.strings[s.nodes[i + iName]] : `(${type})`
    const key = type === 'object' ? name : `${name}`
    const e = out.get(key) ?? { count: 0, size: 0 }
    e.count++
    e.size += s.nodes[i + iSize]
    out.set(key, e)
  }
  return out
}

const dir = tmpdir()
let small: StreamsGroupManager | null = newManager()
heapAfterGc()
const base = summarize(writeHeapSnapshot(join(dir, `member-memory-${process.pid}-a.heapsnapshot`)))
const smallIds = build(small, breakdownMembers, 's')
heapAfterGc()
const full = summarize(writeHeapSnapshot(join(dir, `member-memory-${process.pid}-b.heapsnapshot`)))
const rows: { key: string; count: number; size: number }[] = []
for (const [key, e] of full) {
  const b = base.get(key) ?? { count: 0, size: 0 }
  const d = { key, count: e.count - b.count, size: e.size - b.size }
  if (d.size > 0) rows.push(d)
}
rows.sort((a, b) => b.size - a.size)
const total = rows.reduce((n, r) => n + r.size, 0)
console.log(
  `\nWhat a member is made of (heap snapshot diff over ${f(breakdownMembers)} members, ${f(smallIds.length)} groups; objects that grew, by type and constructor):\n`,
)
console.log('| V8 type / constructor | objects per member | bytes per member | share |')
console.log('| --- | ---: | ---: | ---: |')
for (const r of rows.slice(0, 16)) {
  console.log(
    `| ${r.key} | ${(r.count / breakdownMembers).toFixed(1)} | ${f(r.size / breakdownMembers)} | ${((100 * r.size) / total).toFixed(0)} % |`,
  )
}
console.log(`| total | | ${f(total / breakdownMembers)} | |`)
small = null
