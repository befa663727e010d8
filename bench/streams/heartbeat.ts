// Steady StreamsGroupHeartbeat throughput on one core, next to a bare framing server answering a
// fixed heartbeat-sized response (the ceiling), measured in the same run; then the heartbeat latency
// at half of the measured throughput.
//
// Shape: 1,000 streams groups × 10 members (10,000 members), one stateless subtopology reading a
// 20-partition topic. The members are joined first and heartbeat (reporting their owned tasks) until
// every group is stable; then the load sends, for every member in a fixed shuffled order, the steady
// heartbeat a Kafka Streams client sends when nothing changed: its current member epoch and
// endpoint epoch, null topology, null task lists, null process id, tags and offsets. Every answer
// is checked for error code 0.
//
// The Topograph server runs in this process's one JavaScript thread (one core), with
// coordinator.storage=sqlite (the default) and then memory; the load comes from a forked child
// process over loopback (bench/server/load-worker.ts): 4 connections × 16 in flight for the
// throughput, an open-loop schedule at half that rate for the latency. Bench-only settings:
// initial rebalance delay and assignment interval 0 (so the join phase is quick) and a 10-minute
// session timeout (so no member expires while another phase runs).
//
//   node --import tsx bench/streams/heartbeat.ts [seconds=5] [runs=1]
//
// TOPOGRAPH_BENCH_BUILD=dist runs the compiled server from dist/ (after `npm run build`) instead of
// the TypeScript sources (see bench/server/target.ts).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { StreamsGroupHeartbeatResponse } from '../../src/protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import { createLogger, parseConfig, type RunningServer, serverBuild, startServer } from '../server/target.js'
import { decodeResponse, requestFrame, WireClient } from '../../test/server/wire-client.js'
import {
  bareServer,
  closeServer,
  fmt,
  type Measured,
  median,
  profiled,
  rps,
  runLoad,
  withSizePrefix,
} from '../server/load.js'

const seconds = Number(process.argv[2] ?? 5)
const runs = Number(process.argv[3] ?? 1)
if (!(seconds > 0) || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: heartbeat.ts [seconds>0] [runs>=1]')
  process.exit(2)
}
const GROUPS = 1_000
const MEMBERS = 10
const PARTITIONS = 20
const TOPIC = 'hb-input'
/** Response frame offset of ErrorCode: correlation id (4), header tags (1), ThrottleTimeMs (4). */
const ERROR_CODE_AT = 9

interface TaskIds {
  subtopologyId: string
  partitions: number[]
}
interface Member {
  readonly groupId: string
  readonly memberId: string
  readonly processId: string
  epoch: number
  endpointEpoch: number
  active: TaskIds[]
  standby: TaskIds[]
  warmup: TaskIds[]
}

const topology = {
  epoch: 0,
  subtopologies: [
    {
      subtopologyId: '0',
      sourceTopics: [TOPIC],
      sourceTopicRegex: [],
      stateChangelogTopics: [],
      repartitionSinkTopics: [],
      repartitionSourceTopics: [],
      copartitionGroups: [],
    },
  ],
}

function steadyBody(m: Member) {
  return {
    groupId: m.groupId,
    memberId: m.memberId,
    memberEpoch: m.epoch,
    endpointInformationEpoch: m.endpointEpoch,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    topology: null,
    activeTasks: null,
    standbyTasks: null,
    warmupTasks: null,
    processId: null,
    userEndpoint: null,
    clientTags: null,
    taskOffsets: null,
    taskEndOffsets: null,
    shutdownApplication: false,
  }
}

/** A heartbeat while joining: the topology on the first one, the owned tasks on every one. */
async function joinHeartbeat(c: WireClient, m: Member): Promise<StreamsGroupHeartbeatResponse> {
  const joining = m.epoch === 0
  const { body } = await c.request<StreamsGroupHeartbeatResponse>(88, 1, {
    ...steadyBody(m),
    rebalanceTimeoutMs: joining ? 30_000 : -1,
    topology: joining ? topology : null,
    processId: joining ? m.processId : null,
    clientTags: joining ? [] : null,
    activeTasks: m.active,
    standbyTasks: m.standby,
    warmupTasks: m.warmup,
  })
  if (body.errorCode !== 0) throw new Error(`${m.memberId}: error ${body.errorCode} ${body.errorMessage}`)
  m.epoch = body.memberEpoch
  m.endpointEpoch = body.endpointInformationEpoch
  if (body.activeTasks !== null) m.active = body.activeTasks
  if (body.standbyTasks !== null) m.standby = body.standbyTasks
  if (body.warmupTasks !== null) m.warmup = body.warmupTasks
  return body
}

/** Joins one group's members and heartbeats until they share one epoch and nothing changes. */
async function joinGroup(c: WireClient, g: number): Promise<Member[]> {
  const members: Member[] = Array.from({ length: MEMBERS }, (_, i) => ({
    groupId: `hb-group-${g}`,
    memberId: `hb-member-${g}-${i}`,
    processId: `hb-process-${g}-${i}`,
    epoch: 0,
    endpointEpoch: 0,
    active: [],
    standby: [],
    warmup: [],
  }))
  await Promise.all(members.map((m) => joinHeartbeat(c, m)))
  for (let round = 0; round < 50; round++) {
    const before = members.map((m) => m.epoch)
    const answers = await Promise.all(members.map((m) => joinHeartbeat(c, m)))
    const unchanged = answers.every(
      (r, i) =>
        r.activeTasks === null &&
        r.standbyTasks === null &&
        r.warmupTasks === null &&
        r.memberEpoch === before[i],
    )
    const owned = members.reduce((n, m) => n + m.active.reduce((k, t) => k + t.partitions.length, 0), 0)
    if (unchanged && members.every((m) => m.epoch === members[0].epoch) && owned === PARTITIONS)
      return members
    if (round > 2) await new Promise((r) => setTimeout(r, 5))
  }
  throw new Error(`group ${g} did not become stable`)
}

/** A deterministic shuffle, so consecutive heartbeats go to unrelated groups and shards. */
function shuffled<T>(xs: T[]): T[] {
  const out = [...xs]
  let seed = 12345
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    const j = seed % (i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

interface Prepared {
  readonly server: RunningServer
  readonly dataDir: string
  readonly frames: Buffer[]
  readonly answer: Buffer
  readonly joinSeconds: number
}

async function prepare(storage: 'sqlite' | 'memory'): Promise<Prepared> {
  const dataDir = mkdtempSync(join(tmpdir(), 'topograph-hb-bench-'))
  const server = await startServer(
    parseConfig({
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'data.dir': dataDir,
      'coordinator.storage': storage,
      'console.listener': 'none',
      'group.streams.initial.rebalance.delay.ms': '0',
      'group.streams.assignment.interval.ms': '0',
      'group.streams.session.timeout.ms': '600000',
      'group.streams.max.session.timeout.ms': '600000',
    }),
    { logger: createLogger({ level: 'silent' }) },
  )
  const port = server.address.port
  const admin = await WireClient.connect(port)
  await admin.request(19, 7, {
    topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 1000,
  })
  admin.close()

  const t0 = performance.now()
  const members: Member[] = []
  const clients = await Promise.all(Array.from({ length: 16 }, () => WireClient.connect(port)))
  let nextGroup = 0
  await Promise.all(
    clients.map(async (c) => {
      while (nextGroup < GROUPS) members.push(...(await joinGroup(c, nextGroup++)))
    }),
  )
  const joinSeconds = (performance.now() - t0) / 1000

  // One steady heartbeat per member, decoded: it must change nothing.
  const c = clients[0]
  let answer: Buffer | undefined
  const frames: Buffer[] = []
  for (const m of shuffled(members)) {
    const frame = requestFrame(88, 1, 1, steadyBody(m))
    frames.push(frame)
    c.write(frame)
    const raw = (await c.nextFrame()) as Buffer
    const { body } = decodeResponse<StreamsGroupHeartbeatResponse>(88, 1, raw)
    if (body.errorCode !== 0 || body.memberEpoch !== m.epoch || body.activeTasks !== null) {
      throw new Error(`steady heartbeat of ${m.memberId}: ${JSON.stringify(body)}`)
    }
    answer ??= withSizePrefix(raw)
  }
  for (const k of clients) k.close()
  return { server, dataDir, frames, answer: answer as Buffer, joinSeconds }
}

interface Run {
  bare: Measured
  sqlite: Measured
  sqliteHalf: Measured
  memory: Measured
  memoryHalf: Measured
  joinSeconds: { sqlite: number; memory: number }
  answerBytes: number
}

const closed = { seconds, warmupSeconds: 1, connections: 4, depth: 16, errorCodeAt: ERROR_CODE_AT }
const check = (what: string, r: Measured): Measured => {
  if (r.errors > 0)
    throw new Error(`${what}: ${r.errors} answers with error code (first ${r.firstErrorCode})`)
  return r
}

const all: Run[] = []
for (let run = 0; run < runs; run++) {
  const partial: Partial<Run> = { joinSeconds: { sqlite: 0, memory: 0 } }
  for (const storage of ['sqlite', 'memory'] as const) {
    const p = await prepare(storage)
    ;(partial.joinSeconds as Run['joinSeconds'])[storage] = p.joinSeconds
    if (storage === 'sqlite') {
      const bare = await bareServer(p.answer)
      partial.bare = await runLoad({ ...closed, frames: p.frames, port: bare.port })
      partial.answerBytes = p.answer.length
      await closeServer(bare.server)
    }
    const port = p.server.address.port
    const steady = check(
      storage,
      await profiled(`heartbeat-${storage}-run${run + 1}`, () =>
        runLoad({ ...closed, frames: p.frames, port }),
      ),
    )
    const half = check(
      `${storage} at half load`,
      await runLoad({
        ...closed,
        frames: p.frames,
        port,
        rate: Math.round(rps(steady) / 2),
        maxInFlight: 1000,
      }),
    )
    partial[storage] = steady
    partial[storage === 'sqlite' ? 'sqliteHalf' : 'memoryHalf'] = half
    await p.server.close()
    rmSync(p.dataDir, { recursive: true, force: true })
  }
  const r = partial as Run
  all.push(r)
  console.log(
    `run ${run + 1}: join ${fmt(GROUPS * MEMBERS)} members ${r.joinSeconds.sqlite.toFixed(1)} s (sqlite) / ${r.joinSeconds.memory.toFixed(1)} s (memory); ` +
      `bare ${fmt(rps(r.bare))}/s, sqlite ${fmt(rps(r.sqlite))}/s (${pct(rps(r.sqlite) / rps(r.bare))}), ` +
      `memory ${fmt(rps(r.memory))}/s (${pct(rps(r.memory) / rps(r.bare))}); CPU µs/heartbeat bare ` +
      `${r.bare.cpuUsPerRequest.toFixed(1)}, sqlite ${r.sqlite.cpuUsPerRequest.toFixed(1)}, memory ` +
      `${r.memory.cpuUsPerRequest.toFixed(1)}; at half load p99 ` +
      `sqlite ${r.sqliteHalf.p99.toFixed(2)} ms, memory ${r.memoryHalf.p99.toFixed(2)} ms`,
  )
}

function pct(x: number): string {
  return `${(100 * x).toFixed(0)} %`
}
const m = (pick: (r: Run) => number) => median(all.map(pick))
const ms = (n: number) => n.toFixed(2)
console.log(
  `\n${GROUPS} groups × ${MEMBERS} members, response ${all[0].answerBytes} B, server build ${serverBuild}, medians of ${runs} run(s)`,
)
console.log(
  '| Server | heartbeats/s | p50 / p99 ms (full load) | ratio to bare | CPU µs/heartbeat | CPU ratio | half load: rate/s | p50 / p99 / max ms |',
)
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
console.log(
  `| bare framing server | ${fmt(m((r) => rps(r.bare)))} | ${ms(m((r) => r.bare.p50))} / ${ms(m((r) => r.bare.p99))} | 100 % | ` +
    `${m((r) => r.bare.cpuUsPerRequest).toFixed(1)} | 100 % | — | — |`,
)
for (const k of ['sqlite', 'memory'] as const) {
  const h = k === 'sqlite' ? 'sqliteHalf' : 'memoryHalf'
  console.log(
    `| Topograph, ${k} | ${fmt(m((r) => rps(r[k])))} | ${ms(m((r) => r[k].p50))} / ${ms(m((r) => r[k].p99))} | ` +
      `${pct(m((r) => rps(r[k]) / rps(r.bare)))} | ${m((r) => r[k].cpuUsPerRequest).toFixed(1)} | ` +
      `${pct(m((r) => r.bare.cpuUsPerRequest / r[k].cpuUsPerRequest))} | ${fmt(m((r) => rps(r[h])))} | ` +
      `${ms(m((r) => r[h].p50))} / ${ms(m((r) => r[h].p99))} / ${ms(m((r) => r[h].max))} |`,
  )
}
