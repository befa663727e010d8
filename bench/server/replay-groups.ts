// Restart replay of the group coordinator over a data.dir a running broker could have written: the
// real GroupCoordinatorService writes it through its real operations (so the bytes are exactly a
// server's), in the proportions a broker writes them:
//
// - streams groups of 4 members over a 20-partition source topic (joins, epochs, assignments, the
//   topology, its description pushed to a plugin and the stored topology epoch), each member leaving
//   and joining again a few times;
// - consumer groups (KIP-848) of 3 members and classic groups (JoinGroup / SyncGroup) of 1 member;
// - mostly Kafka Streams-shaped offset commits: every streams group commits its 20 partitions again
//   and again (so almost every record is superseded by a later one of the same key), the consumer
//   groups their 6 partitions less often;
// - a quarter of the streams groups and a fifth of the consumer groups deleted at the end
//   (tombstones).
//
// Then, alternated in one process so that all of them see the same file cache:
//   1. the raw better-sqlite3 scan of the same rows (each record's key and value read out of its
//      batch row, as bench/server/replay.ts does);
//   2. the same raw scan with each record decoded by the coordinator's record serde (the decode
//      alone: nothing kept);
//   3. `GroupCoordinatorService.start()` over the store: `CoordinatorRuntime.load()` with the real
//      shards (load, decode, replay, the shards' on-loaded operations), as a server's start-up runs
//      it, then close.
// Goal (BENCHMARKS.md, "Storage replay"): 3 ≥ 50 % of 1. With TOPOGRAPH_TEST_PG_URL set, the same
// batches are copied to a PostgreSQL store (a schema of its own, dropped at the end) and its start
// and raw node-postgres scan are measured in the same rounds.
//
// The log is written with the modules of src/; what is measured (the start, the scans, the decode)
// runs the build under test: src/ under tsx, or the compiled modules of dist/ with
// TOPOGRAPH_BENCH_BUILD=dist (after `npm run build`; a built server runs no tsx helpers), of this
// checkout or of TOPOGRAPH_BENCH_ROOT=<dir>. TOPOGRAPH_BENCH_BASE=<dir> adds the start of the same
// build of another checkout (a base before a change) to every round, its order with this one's
// alternated from round to round, over the same file.
//
//   [TOPOGRAPH_TEST_PG_URL=postgres://…] [TOPOGRAPH_BENCH_BUILD=dist] [TOPOGRAPH_BENCH_BASE=<dir>]
//     node --import tsx bench/server/replay-groups.ts [commitRounds=200] [streamsGroups=40]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { ManualClock } from '../../src/coordinator/runtime/clock.js'
import { GroupCoordinatorService } from '../../src/coordinator/service/group-coordinator-service.js'
import type { CoordinatorNewTopic, CoordinatorTopic } from '../../src/coordinator/service/topics-image.js'
import { PostgresRecordStore } from '../../src/coordinator/storage/postgres.js'
import { rowRecords, SQLITE_FILE_NAME, SqliteRecordStore } from '../../src/coordinator/storage/sqlite.js'
import type { RecordStore } from '../../src/coordinator/storage/types.js'
import { readRecord, VarReader } from '../../src/log/batch.js'
import { guardPlugin } from '../../src/plugin/guard.js'
import type {
  StreamsGroupTopologyDescription,
  StreamsGroupTopologyDescriptionPlugin,
} from '../../src/plugin/spi.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import { createConsumerGroupHeartbeatRequest } from '../../src/protocol/generated/messages/ConsumerGroupHeartbeatRequest.js'
import {
  createStreamsGroupHeartbeatRequest,
  createStreamsGroupHeartbeatRequestSubtopology,
} from '../../src/protocol/generated/messages/StreamsGroupHeartbeatRequest.js'
import { createStreamsGroupTopologyDescriptionUpdateRequestTopologyDescriptionNode } from '../../src/protocol/generated/messages/StreamsGroupTopologyDescriptionUpdateRequest.js'
import { parseConfig } from '../../src/server/config.js'
import { at, atRoot, buildName, root } from './in-process.js'
import { pgPeer, rawPgScan, rawSqliteScan } from './replay-scans.js'

const COMMIT_ROUNDS = Number(process.argv[2] ?? 200)
const STREAMS_GROUPS = Number(process.argv[3] ?? 40)
const CONSUMER_GROUPS = Math.max(1, Math.round(STREAMS_GROUPS / 2))
const CLASSIC_GROUPS = Math.max(1, Math.round(STREAMS_GROUPS / 4))
const MEMBERS = 4
const CONSUMER_MEMBERS = 3
const PARTITIONS = 20
const CONSUMER_PARTITIONS = 6
const SHARDS = 50
const ROUNDS = 7
if (![COMMIT_ROUNDS, STREAMS_GROUPS].every((x) => Number.isInteger(x) && x > 0)) {
  console.error('usage: replay-groups.ts [commitRounds>0] [streamsGroups>0]')
  process.exit(2)
}

const CONFIG = {
  'offsets.topic.num.partitions': String(SHARDS),
  'group.streams.initial.rebalance.delay.ms': '0',
  'group.streams.assignment.interval.ms': '0',
  'group.initial.rebalance.delay.ms': '0',
  'group.coordinator.rebalance.protocols': 'classic,consumer,streams',
}
const SOURCE = { name: 'events', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', numPartitions: PARTITIONS }
const CONSUMED = { name: 'orders', topicId: 'AAAAAAAAAAAAAAAAAAAAAg', numPartitions: CONSUMER_PARTITIONS }

class Topics {
  readonly #topics = new Map<string, CoordinatorTopic>([
    [SOURCE.name, SOURCE],
    [CONSUMED.name, CONSUMED],
  ])
  list(): CoordinatorTopic[] {
    return [...this.#topics.values()]
  }
  async createTopics(topics: readonly CoordinatorNewTopic[]) {
    return topics.map((t) => {
      const id = Buffer.alloc(16, this.#topics.size + 1).toString('base64url')
      this.#topics.set(t.name, { name: t.name, topicId: id, numPartitions: t.numPartitions })
      return { name: t.name, error: 'NONE', message: null }
    })
  }
}

/** A topology-description backend that keeps what it is given. */
class HeldDescriptions implements StreamsGroupTopologyDescriptionPlugin {
  readonly held = new Map<string, number>()
  configure(): void {}
  async setTopology(groupId: string, epoch: number, _d: StreamsGroupTopologyDescription): Promise<void> {
    this.held.set(groupId, epoch)
  }
  async getTopology(groupId: string, epoch: number): Promise<StreamsGroupTopologyDescription | null> {
    return this.held.get(groupId) === epoch ? { subtopologies: [], globalStores: [] } : null
  }
  async deleteTopology(groupId: string): Promise<void> {
    this.held.delete(groupId)
  }
  async close(): Promise<void> {}
}

const ctx = { apiVersion: 1, clientId: 'bench', clientHost: '/127.0.0.1' }
const SOURCE_NODE = createStreamsGroupTopologyDescriptionUpdateRequestTopologyDescriptionNode({
  name: 'KSTREAM-SOURCE-0000000000',
  nodeType: 1,
  sourceTopics: [SOURCE.name],
})

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

function check(what: string, code: number): void {
  if (code !== ErrorCode.NONE) throw new Error(`${what}: error ${code}`)
}

/** Lets the service's promise chains settle while the manual clock moves (timers fire). */
async function settle<T>(clock: ManualClock, p: Promise<T>): Promise<T> {
  let done = false
  const out = p.finally(() => {
    done = true
  })
  while (!done) {
    clock.advance(10)
    await new Promise((r) => setImmediate(r))
  }
  return out
}

interface StreamsMember {
  readonly groupId: string
  readonly memberId: string
  epoch: number
}

/** Writes the workload through the real service; returns the number of operations run. */
async function writeWorkload(store: RecordStore): Promise<number> {
  const clock = new ManualClock(1_764_000_000_000)
  let uuid = 0
  const service = await GroupCoordinatorService.start({
    store,
    config: parseConfig(CONFIG),
    topics: new Topics(),
    clock,
    topologyDescriptionPlugin: guardPlugin(new HeldDescriptions()),
    newUuid: () => `member-${++uuid}`,
    random: () => 0.5,
  })
  let ops = 0
  const streamsHb = async (m: StreamsMember, join: boolean, leave = false): Promise<void> => {
    ops++
    const r = await service.streamsGroupHeartbeat(
      ctx,
      createStreamsGroupHeartbeatRequest({
        groupId: m.groupId,
        memberId: m.memberId,
        memberEpoch: leave ? -1 : join ? 0 : m.epoch,
        endpointInformationEpoch: -1,
        ...(join && {
          rebalanceTimeoutMs: 30_000,
          topology: {
            epoch: 1,
            subtopologies: [
              createStreamsGroupHeartbeatRequestSubtopology({
                subtopologyId: '0',
                sourceTopics: [SOURCE.name],
              }),
            ],
          },
          activeTasks: [],
          standbyTasks: [],
          warmupTasks: [],
          processId: `${m.memberId}-process`,
        }),
      }),
    )
    check(`streams heartbeat of ${m.memberId}`, r.errorCode)
    if (!leave) m.epoch = r.memberEpoch
    if (r.topologyDescriptionRequired) {
      ops++
      const pushed = await service.streamsGroupTopologyDescriptionUpdate({
        groupId: m.groupId,
        memberId: m.memberId,
        topologyEpoch: 1,
        topologyDescription: {
          subtopologies: [{ subtopologyId: '0', nodes: [SOURCE_NODE] }],
          globalStores: [],
        },
      })
      check(`topology push of ${m.groupId}`, pushed.errorCode)
    }
  }

  // 1. Streams groups: every member joins, then heartbeats until the group is stable.
  const streams: StreamsMember[][] = []
  for (let g = 0; g < STREAMS_GROUPS; g++) {
    const members: StreamsMember[] = []
    for (let i = 0; i < MEMBERS; i++) {
      const m = { groupId: `streams-app-${g}`, memberId: `streams-app-${g}-member-${i}`, epoch: 0 }
      members.push(m)
      await streamsHb(m, true)
    }
    streams.push(members)
  }
  const heartbeatAll = async () => {
    await Promise.all(streams.flatMap((ms) => ms.map((m) => streamsHb(m, false))))
  }
  await heartbeatAll()
  await heartbeatAll()

  // 2. Consumer groups (KIP-848) and classic groups.
  const consumers: { groupId: string; memberId: string; epoch: number }[] = []
  for (let g = 0; g < CONSUMER_GROUPS; g++) {
    for (let i = 0; i < CONSUMER_MEMBERS; i++) {
      const c = { groupId: `consumer-app-${g}`, memberId: `consumer-app-${g}-member-${i}`, epoch: 0 }
      ops++
      const r = await service.consumerGroupHeartbeat(
        ctx,
        createConsumerGroupHeartbeatRequest({
          groupId: c.groupId,
          memberId: c.memberId,
          rebalanceTimeoutMs: 30_000,
          subscribedTopicNames: [CONSUMED.name],
          topicPartitions: [],
        }),
      )
      check(`consumer heartbeat of ${c.memberId}`, r.errorCode)
      c.epoch = r.memberEpoch
      consumers.push(c)
    }
  }
  const classic: { groupId: string; memberId: string; generation: number }[] = []
  for (let g = 0; g < CLASSIC_GROUPS; g++) {
    const groupId = `classic-app-${g}`
    const join = (memberId: string) => {
      ops++
      return settle(
        clock,
        service.classicGroups.joinGroup(
          { apiVersion: 9, clientId: 'bench', clientHost: '/127.0.0.1' },
          {
            groupId,
            sessionTimeoutMs: 45_000,
            rebalanceTimeoutMs: 60_000,
            memberId,
            groupInstanceId: null,
            protocolType: 'consumer',
            protocols: [{ name: 'range', metadata: new Uint8Array(24) }],
            reason: null,
          },
        ),
      )
    }
    const first = await join('')
    if (first.errorCode !== ErrorCode.MEMBER_ID_REQUIRED) check(`classic join of ${groupId}`, first.errorCode)
    const joined = first.errorCode === ErrorCode.NONE ? first : await join(first.memberId)
    check(`classic join of ${groupId}`, joined.errorCode)
    ops++
    const synced = await settle(
      clock,
      service.classicGroups.syncGroup(
        { apiVersion: 5, clientId: 'bench', clientHost: '/127.0.0.1' },
        {
          groupId,
          generationId: joined.generationId,
          memberId: joined.memberId,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocolName: 'range',
          assignments: [{ memberId: joined.memberId, assignment: new Uint8Array(40) }],
        },
      ),
    )
    check(`classic sync of ${groupId}`, synced.errorCode)
    classic.push({ groupId, memberId: joined.memberId, generation: joined.generationId })
  }

  // 3. Offset commits: every streams group commits its 20 partitions each round (Kafka Streams
  // commits every task's offsets), the consumer and classic groups every fourth round. Every
  // twentieth round one member of each streams group leaves and joins again (new epochs and
  // assignments).
  const commit = async (
    groupId: string,
    memberId: string,
    epoch: number,
    topic: typeof SOURCE,
    round: number,
  ) => {
    ops++
    const r = await service.commitOffsets(9, {
      groupId,
      generationIdOrMemberEpoch: epoch,
      memberId,
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [
        {
          name: topic.name,
          topicId: topic.topicId,
          partitions: Array.from({ length: topic.numPartitions }, (_, p) => ({
            partitionIndex: p,
            committedOffset: BigInt(round * 1000 + p),
            committedLeaderEpoch: 0,
            committedMetadata: '',
          })),
        },
      ],
    })
    for (const t of r) for (const p of t.partitions) check(`commit of ${groupId}`, p.errorCode)
  }
  for (let round = 0; round < COMMIT_ROUNDS; round++) {
    const all: Promise<void>[] = []
    for (const ms of streams) all.push(commit(ms[0].groupId, ms[0].memberId, ms[0].epoch, SOURCE, round))
    if (round % 4 === 0) {
      for (const c of consumers)
        if (c.memberId.endsWith('-0')) all.push(commit(c.groupId, c.memberId, c.epoch, CONSUMED, round))
      for (const c of classic) all.push(commit(c.groupId, c.memberId, c.generation, CONSUMED, round))
    }
    await Promise.all(all)
    if (round % 20 === 19) {
      for (const ms of streams) {
        const m = ms[1 + (((round / 20) % (MEMBERS - 1)) | 0)]
        await streamsHb(m, false, true)
        await streamsHb(m, true)
      }
      await heartbeatAll()
      await heartbeatAll()
    }
  }

  // 4. Deleted groups: their members leave, then DeleteGroups writes their tombstones.
  const deleted: string[] = []
  for (let g = 0; g < STREAMS_GROUPS; g += 4) {
    for (const m of streams[g]) await streamsHb(m, false, true)
    deleted.push(streams[g][0].groupId)
  }
  for (let g = 0; g < CONSUMER_GROUPS; g += 5) {
    for (const c of consumers.filter((x) => x.groupId === `consumer-app-${g}`)) {
      ops++
      const r = await service.consumerGroupHeartbeat(
        ctx,
        createConsumerGroupHeartbeatRequest({ groupId: c.groupId, memberId: c.memberId, memberEpoch: -1 }),
      )
      check(`consumer leave of ${c.memberId}`, r.errorCode)
    }
    deleted.push(`consumer-app-${g}`)
  }
  ops++
  for (const r of await service.deleteGroups(deleted)) check(`delete of ${r.groupId}`, r.errorCode)
  await service.close()
  return ops
}

/** The record types in the file, by count (key type id → records). */
function recordMix(file: string): Map<number, { n: number; tombstones: number }> {
  const db = new Database(file, { readonly: true })
  const mix = new Map<number, { n: number; tombstones: number }>()
  for (const row of db
    .prepare<[], { n: number; attributes: number; records: Buffer }>(
      'SELECT record_count AS n, attributes, records FROM coordinator_batches',
    )
    .all()) {
    const reader = new VarReader(rowRecords(row))
    for (let i = 0; i < row.n; i++) {
      const r = readRecord(reader)
      const type = r.key === null ? -1 : (r.key[0] << 8) | r.key[1]
      const e = mix.get(type) ?? { n: 0, tombstones: 0 }
      e.n++
      if (r.value === null) e.tombstones++
      mix.set(type, e)
    }
  }
  db.close()
  return mix
}

const TYPE_NAMES: Record<number, string> = {
  1: 'OffsetCommit',
  2: 'GroupMetadata',
  3: 'ConsumerGroupMetadata',
  4: 'ConsumerGroupPartitionMetadata',
  5: 'ConsumerGroupMemberMetadata',
  6: 'ConsumerGroupTargetAssignmentMetadata',
  7: 'ConsumerGroupTargetAssignmentMember',
  8: 'ConsumerGroupCurrentMemberAssignment',
  16: 'ConsumerGroupRegularExpression',
  17: 'StreamsGroupMetadata',
  19: 'StreamsGroupMemberMetadata',
  20: 'StreamsGroupTargetAssignmentMetadata',
  21: 'StreamsGroupTargetAssignmentMember',
  22: 'StreamsGroupCurrentMemberAssignment',
  23: 'StreamsGroupTopology',
}

/** The modules of one build that a start runs (this checkout's, or the base's). */
// biome-ignore lint/suspicious/noExplicitAny: the modules of another checkout are untyped here
type Modules = Record<string, any>
async function modulesOf(get: (path: string) => Promise<Modules>): Promise<Modules> {
  return {
    ...(await get('coordinator/runtime/clock.js')),
    ...(await get('coordinator/service/group-coordinator-service.js')),
    ...(await get('coordinator/service/records.js')),
    ...(await get('coordinator/storage/postgres.js')),
    ...(await get('coordinator/storage/sqlite.js')),
    ...(await get('plugin/guard.js')),
    ...(await get('server/config.js')),
  }
}
const built = await modulesOf(at)
const baseRoot = process.env.TOPOGRAPH_BENCH_BASE
const base = baseRoot === undefined ? undefined : await modulesOf((path) => atRoot(baseRoot, path))

/** Starts the group coordinator over a store (load, decode, replay, on-loaded), closes it; returns ms and the groups. */
async function startOver(
  m: Modules,
  open: (m: Modules) => Promise<RecordStore>,
): Promise<{ ms: number; groups: number }> {
  const t0 = process.hrtime.bigint()
  const store = await open(m)
  const service = await m.GroupCoordinatorService.start({
    store,
    closeStore: true,
    config: m.parseConfig(CONFIG),
    topics: new Topics(),
    clock: new m.ManualClock(1_764_100_000_000),
    topologyDescriptionPlugin: m.guardPlugin(new HeldDescriptions()),
  })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  const counts = await service.groupCounts()
  await service.close()
  let groups = 0
  for (const n of counts.byType.values()) groups += n
  return { ms, groups }
}

let checksum = 0

/** The raw scan of every shard's rows; `decode`: each record also decoded by the coordinator's serde. */
function rawScan(file: string, decode: boolean): { ms: number; records: number } {
  const t0 = process.hrtime.bigint()
  const records = rawSqliteScan(file, SHARDS, (_shard, key, value) => {
    if (!decode) checksum += (key?.length ?? 0) + (value?.length ?? 0)
    else if (key !== null && built.coordinatorRecordSerde.deserialize({ key, value }) !== undefined)
      checksum++
  })
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, records }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-replay-groups-'))
  const file = join(dir, SQLITE_FILE_NAME)
  const peer = pgPeer('tg_replay_groups')
  const pgUrl = peer?.url
  try {
    // 1. The workload, through the real service, into SQLite.
    const store = new SqliteRecordStore(dir)
    await store.open()
    const w0 = process.hrtime.bigint()
    const ops = await writeWorkload(store)
    const writeMs = Number(process.hrtime.bigint() - w0) / 1e6
    await store.close()
    const mix = recordMix(file)
    const total = [...mix.values()].reduce((a, e) => a + e.n, 0)
    const live = rawScan(file, false).records
    if (live !== total) throw new Error(`scan found ${live} records, the file holds ${total}`)
    let pgRecords = 0
    if (pgUrl !== undefined) {
      // The same batches, copied row by row (the same records in the same appends).
      await peer?.create()
      const p = new PostgresRecordStore(pgUrl)
      await p.open()
      const db = new Database(file, { readonly: true })
      for (const row of db
        .prepare<[], { shard: number; n: number; attributes: number; records: Buffer }>(
          'SELECT shard, record_count AS n, attributes, records FROM coordinator_batches ORDER BY shard, base_offset',
        )
        .all()) {
        // Rows stored compressed are read as loading reads them.
        const reader = new VarReader(rowRecords(row))
        const batch = []
        for (let i = 0; i < row.n; i++) {
          const r = readRecord(reader)
          if (r.key !== null) batch.push({ key: r.key, value: r.value })
        }
        pgRecords += batch.length
        await p.append(row.shard, batch)
      }
      db.close()
      await p.close()
    }

    // 2. Alternated measurements.
    const rawMs: number[] = []
    const decodeMs: number[] = []
    const loadMs: number[] = []
    const pgLoadMs: number[] = []
    const pgRawMs: number[] = []
    const emptyMs: number[] = []
    const emptyDir = mkdtempSync(join(tmpdir(), 'topograph-replay-groups-empty-'))
    let groups = -1
    const openSqlite = async (m: Modules) => {
      const s = new m.SqliteRecordStore(dir)
      await s.open()
      return s
    }
    const baseLoadMs: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const startBase = async () => {
        if (base === undefined) return
        const loaded = await startOver(base, openSqlite)
        if (groups !== -1 && loaded.groups !== groups) throw new Error('the base loaded other groups')
        baseLoadMs.push(loaded.ms)
      }
      // The base first in odd rounds, second in even ones.
      if (round % 2 === 1) await startBase()
      const loaded = await startOver(built, openSqlite)
      loadMs.push(loaded.ms)
      if (groups !== -1 && loaded.groups !== groups) throw new Error('the groups differ between loads')
      groups = loaded.groups
      if (round % 2 === 0) await startBase()
      rawMs.push(rawScan(file, false).ms)
      decodeMs.push(rawScan(file, true).ms)
      // What a start costs with nothing to load: the store's open, the service, 50 empty shards.
      emptyMs.push(
        (
          await startOver(built, async (m) => {
            const s = new m.SqliteRecordStore(emptyDir)
            await s.open()
            return s
          })
        ).ms,
      )
      if (pgUrl !== undefined) {
        const url = pgUrl
        const pgLoaded = await startOver(built, async (m) => {
          const s = new m.PostgresRecordStore(url)
          await s.open()
          return s
        })
        if (pgLoaded.groups !== groups) throw new Error('PostgreSQL loaded other groups than SQLite')
        pgLoadMs.push(pgLoaded.ms)
        const raw = await rawPgScan(url, SHARDS)
        pgRawMs.push(raw.ms)
        checksum += raw.bytes
        const rows = raw.rows
        if (rows !== pgRecords)
          throw new Error(`raw PostgreSQL scan found ${rows} rows, expected ${pgRecords}`)
      }
    }

    rmSync(emptyDir, { recursive: true, force: true })
    const line = (label: string, text: string) => console.log(`${label.padEnd(42)}${text}`)
    const rate = (ms: number[]) =>
      `${Math.round(total / (median(ms) / 1000)).toLocaleString('en')} records/s (${median(ms).toFixed(1)} ms)`
    // Rates are records / time, so the ratio of rates is the inverse ratio of the median times.
    const ratio = (num: number[], den: number[]) => `${((median(den) / median(num)) * 100).toFixed(1)}%`
    console.log(
      `measured: ${root}/${buildName}${baseRoot === undefined ? '' : `, base ${baseRoot}/${buildName}`}`,
    )
    console.log(
      `streams groups ${STREAMS_GROUPS} × ${MEMBERS}, consumer groups ${CONSUMER_GROUPS} × ${CONSUMER_MEMBERS}, classic groups ${CLASSIC_GROUPS}, commit rounds ${COMMIT_ROUNDS}, shards ${SHARDS}, rounds ${ROUNDS} (medians)`,
    )
    line('operations written:', `${ops.toLocaleString('en')} in ${(writeMs / 1000).toFixed(1)} s`)
    line('records:', `${total.toLocaleString('en')}; groups alive after load: ${groups}`)
    for (const [type, e] of [...mix].sort((a, b) => b[1].n - a[1].n)) {
      line(
        `  ${TYPE_NAMES[type] ?? `type ${type}`}:`,
        `${e.n.toLocaleString('en')} (${((e.n / total) * 100).toFixed(1)} %, ${e.tombstones} tombstones)`,
      )
    }
    line('raw SQLite scan:', rate(rawMs))
    line('raw scan + record decode:', rate(decodeMs))
    line('start (load + decode + replay):', rate(loadMs))
    line('decode / raw scan:', ratio(decodeMs, rawMs))
    const r = median(rawMs) / median(loadMs)
    line('replay / raw scan:', `${(r * 100).toFixed(1)}% (goal >= 50%) ${r >= 0.5 ? 'OK' : 'BELOW GOAL'}`)
    line('replay / raw scan + decode:', ratio(loadMs, decodeMs))
    if (base !== undefined) {
      line('base start:', rate(baseLoadMs))
      const b = median(rawMs) / median(baseLoadMs)
      line('base replay / raw scan:', `${(b * 100).toFixed(1)}%`)
      line('base start runs (ms):', baseLoadMs.map((x) => x.toFixed(1)).join(', '))
    }
    line('start runs (ms):', loadMs.map((x) => x.toFixed(1)).join(', '))
    line('raw scan runs (ms):', rawMs.map((x) => x.toFixed(1)).join(', '))
    line('start over an empty data.dir:', `${median(emptyMs).toFixed(1)} ms`)
    if (pgUrl !== undefined) {
      line('raw PostgreSQL scan:', rate(pgRawMs))
      line('postgres start:', rate(pgLoadMs))
      line('postgres replay / raw PG scan:', ratio(pgLoadMs, pgRawMs))
      line('postgres replay / SQLite replay:', ratio(pgLoadMs, loadMs))
    } else {
      console.log('postgres: not measured (set TOPOGRAPH_TEST_PG_URL to add it)')
    }
    if (checksum < 0) console.log(checksum)
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await peer?.drop()
  }
}

await main()
