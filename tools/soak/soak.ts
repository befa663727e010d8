// The soak: a real `topograph start` process (SQLite coordinator storage, the controllable test
// plugin on its SQLite backend so descriptions survive the restart) under N streams members across
// G groups, a consumer group and idempotent producers, for M minutes with churn (1 % of the members
// replaced a minute), one plugin outage and one clean restart. This process is the load. Its
// streams members are spread over `loadThreads` worker threads (tools/soak/load-thread.ts), each
// an application instance with its own connections and the members of its groups
// (tools/soak/members.ts); the main thread keeps the server, the data plane, the churn's timing,
// the outage, the restart, the end check and the rows. See tools/soak/main.ts for the command and
// RELIABILITY.md ("Soak") for what it checks.
//
// The heartbeat latency is the server's as nearly as the load can tell it: the connection stamps a
// heartbeat just before its frame is written to the socket and when the chunk that holds its
// answer is read, before anything in that chunk is decoded (`Timing` in client.ts). What the load
// does around the socket (encoding, decoding, the handlers of the answers ahead in the chunk) is
// left out; a turn of the member's own thread (its timers, its GC) that keeps an answer waiting in
// the socket is not, as a loop cannot read while it is busy. With the members on several threads
// that wait is one instance's, not every member's at once, as with real application instances.
// Each row shows, beside that p99, the p99 as the member's handler sees it and the worst member
// thread's loop delay and GC, and each minute's log line every thread's: a latency that moves with
// the load-side columns is the load's. Each thread counts its minute in fixed-size storage (a
// latency histogram, not an array of samples) and the main thread merges them
// (tools/soak/measures.ts); the records acked, consumed and read back are counts by producer and
// sequence number.
import {
  closeSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { STREAMS_GROUP_CONFIG_DEFAULTS } from '../../src/coordinator/shard/streams/config.js'
import * as p from '../../src/protocol/index.js'
import { makeBatch, readRecords } from '../../test/helpers/data-plane.js'
import { pluginFiles } from '../../test/helpers/kip1331.js'
import {
  cliNodeOptions,
  freeLoopbackPort,
  startTopographProcess,
  type TopographProcess,
} from '../../test/helpers/topograph-process.js'
import { pageReporting, pageReportingSetting } from '../../bench/data/kernel-state.js'
import { splitCeiling, startCeiling } from './ceiling.js'
import { ClockMinute, startClockThread } from './clock-watch.js'
import { ConnectionClosedError, ReconnectingClient } from './client.js'
import { E, RETRIABLE, STREAMS_TOPIC, sleep, wallNow } from './common.js'
import { inProcessThread, type LoadThread, workerThread } from './load-thread.js'
import {
  clockProbeNs,
  LoopbackProbe,
  memoryProbeNs,
  SwitchCounter,
  fileRefaults,
  machineCpuMs,
  syscallProbeNs,
} from './machine.js'
import {
  bunching,
  type LoopMinute,
  LoopMonitor,
  mergeThreadMinutes,
  quantile,
  SeqCounts,
  SpeedRounds,
  splitLoad,
  THREAD_COUNTS,
  type ThreadCounts,
} from './measures.js'
import { type MemberLoadTotals, sinkTopic } from './members.js'

export interface SoakOptions {
  readonly minutes: number
  readonly members: number
  readonly groups: number
  /** Length of a soak "minute" in ms: 60,000 for the real run, less for the compressed one. */
  readonly minuteMs: number
  /** Connections carrying the streams members' requests, shared out over the load threads (at least one each). */
  readonly connections: number
  /**
   * Worker threads of the load process the streams members are spread over, each an application
   * instance with its own connections and groups (0: every member on the main thread).
   */
  readonly loadThreads: number
  readonly producers: number
  readonly consumers: number
  /** Members replaced a minute, in per cent of `members`. */
  readonly churnPercent: number
  /** Minute at which the plugin outage begins, and its length in minutes. */
  readonly outageAt: number
  readonly outageMinutes: number
  /** Minute at which the server is stopped and started again. */
  readonly restartAt: number
  /** First minute of the flatness window (heartbeat p99, RSS). */
  readonly flatFrom: number
  /**
   * Members heartbeating the ceiling (tools/soak/ceiling.ts) on the load threads beside the real
   * ones, for the whole run; 0 runs no ceiling.
   */
  readonly ceilingMembers: number
  /**
   * Each load thread moves the phases it keeps by a few ms onto the least-taken milliseconds of
   * the interval (`SendSlots`, tools/soak/send-slots.ts), so that it sends no heartbeats back to
   * back that it could send apart; the intervals and the server are unchanged.
   */
  readonly spreadSends?: boolean
  /** Server settings on top of the soak's own (listener, storage, plugin). */
  readonly server: Readonly<Record<string, string>>
  readonly log: (line: string) => void
  /** Where to write the server processes' output at the end (none when undefined). */
  readonly serverLogFile?: string
}

export const ISSUE_DEFAULTS = {
  minutes: 30,
  members: 10_000,
  groups: 1_000,
  minuteMs: 60_000,
  connections: 4,
  // Two, not four: on two cores the members' threads spent about a third less CPU per heartbeat
  // and waited less for a core (RELIABILITY.md, "Two load threads instead of four").
  loadThreads: 2,
  producers: 2,
  consumers: 2,
  churnPercent: 1,
  outageAt: 10,
  outageMinutes: 2,
  restartAt: 20,
  flatFrom: 5,
  ceilingMembers: 2_000,
} as const

/** A minute's row: the load threads' counts (`ThreadCounts`, merged) and the rest. */
export interface MinuteRow extends ThreadCounts {
  readonly minute: number
  /**
   * When the minute ended, on the wall clock (`Date.now()` as its row began to close), printed in
   * the row's load-loops line: to set the row beside what was sampled outside the soak.
   */
  closedAt: number
  /**
   * Heartbeat latencies stamped at the socket (`Timing`: the frame written, the chunk with its
   * answer read), merged over the load threads, and the p99 as the member's handler sees it (from
   * before the request is encoded to the answer's handler: every delay of its thread's loop in it,
   * as the rows before 2026-12-03 had).
   */
  p50: number
  p99: number
  p99Handled: number
  /**
   * The ceiling members' latency in the minute (tools/soak/ceiling.ts: the same load threads, a
   * server that does nothing), and Topograph's p99 against its p99: divided by it, and less it (ms).
   */
  ceilingP50: number
  ceilingP99: number
  /** The members' p99 of the heartbeats sent first in their millisecond of their thread's sends, and of the others. */
  p99FirstInMs: number
  changedHeartbeats: number
  p50Changed: number
  p99Changed: number
  p99LaterInMs: number
  p99OverCeiling: number
  p99AboveCeiling: number
  /** The ceiling's process's CPU time in the minute, per ceiling heartbeat answered, in µs. */
  ceilingCpuPerHeartbeatUs: number
  produced: number
  consumed: number
  /** Median and highest of the server's RSS samples in the minute (one every 5 s). */
  rssMb: number
  rssMaxMb: number
  /** Median of the server's heap-used samples in the minute. */
  heapMb: number
  /** Medians of the server's heap committed (heapTotal), `external` and anonymous memory (smaps). */
  heapTotalMb: number
  externalMb: number
  anonMb: number
  rssSamples: number[]
  heapSamples: number[]
  heapTotalSamples: number[]
  externalSamples: number[]
  anonSamples: number[]
  /** The server's event loop in the minute: longest delay, and the median second's utilisation. */
  serverLoopMaxMs: number
  serverElu: number
  /** The server process's CPU time in the minute (every thread), per heartbeat answered, in µs. */
  serverCpuPerHeartbeatUs: number
  /**
   * The server's main thread alone: its CPU time per heartbeat answered (µs), and its time in the
   * minute runnable but waiting for a core (ms): what the machine's contention added to its turns.
   */
  serverMainCpuPerHeartbeatUs: number
  serverMainWaitMs: number
  /** The server's garbage collection in the minute: longest pause and total. */
  gcMaxMs: number
  gcTotalMs: number
  /** Scavenges and mark-compacts in the minute: how many, and their pauses' total. */
  scavenges: number
  scavengeMs: number
  markCompacts: number
  markCompactMs: number
  /** Median of the young generation's committed size (new space). */
  newSpaceMb: number
  /** Medians of the old generation's used and committed sizes (old space): what replay or promotion left there. */
  oldSpaceMb: number
  oldSpaceCommittedMb: number
  /**
   * The server's long turns in the minute (10 ms or more beyond its 10-ms probe's period, see
   * tools/soak/report-memory.mjs): on the CPU (the server's own work, its GC counted apart), waiting
   * for a core (the machine), other; and the longest on-CPU turn outside GC.
   */
  longCpu: number
  longCpuGc: number
  longWait: number
  longOther: number
  longCpuMaxMs: number
  /** Heartbeats sent per 100 ms, over every thread: the busiest 100 ms, and the share of the minute's sends in its busiest tenth. */
  sendsMax100ms: number
  sendsTopTenthShare: number
  loadavg: number
  /**
   * The members' threads' own loop delay (p99 and longest) and longest GC pause in the minute, the
   * worst thread's (in its members' latencies).
   */
  loopP99Ms: number
  loopMaxMs: number
  loadGcMaxMs: number
  /**
   * The members' threads' scavenges and mark-compacts in the minute, and their heaps used just after
   * the minute's last mark-compact (what they keep, without the garbage a heap used at any other
   * moment has in it), added up over the threads; NaN in a minute without one.
   */
  loadScavenges: number
  loadMarkCompacts: number
  loadHeapMb: number
  /** The members' threads' CPU time and their time waiting for a core in the minute, added up (ms). */
  loadCpuMs: number
  loadRunWaitMs: number
  /**
   * The machine's speed as the load's main thread gets it (`speedProbeUs`, three runs a second): the
   * median of each second's fastest run, and the 90th percentile of every run, in µs.
   */
  speedProbeUs: number
  speedProbeP90Us: number
  /**
   * What the speed probe does not feel (tools/soak/machine.ts), sampled every 5 s on the load's main
   * thread, each the median of the minute's samples of the fastest of a few runs: ns per step of a
   * dependent walk over 64 MB (memory latency), µs per loopback write and read round trip, ns per
   * clock read, ns per empty system call; and the host's steal time in the minute (ms, as the guest counts it).
   */
  memoryProbeNs: number
  loopbackUs: number
  clockNs: number
  syscallNs: number
  stealMs: number
  /**
   * The machine's CPU time in the minute, every CPU's (ms, /proc/stat: user, nice, system, irq and
   * softirq), and what of it the soak's own processes did not take (the server's CPU from its lines,
   * the ceiling's, the load process's own, every thread): the guest's kernel threads (its proactive
   * reclaim among them), softirq work no process was charged for, anything else running. In a
   * restart's minute the old server's last second is in it. Beside them the machine's softirq time
   * and the file pages read back in after the kernel dropped them (`fileRefaults` in machine.ts),
   * and the MiB of free pages the guest handed back to the host (free page reporting: a page taken
   * again after that costs a fault in the host; `pageReporting` in bench/data/kernel-state.ts).
   */
  machineBusyMs: number
  outsideSoakMs: number
  softirqMs: number
  fileRefaults: number
  toHostMib: number
  /** Context switches in the minute, voluntary and nonvoluntary, over every thread of the server and of the load process. */
  serverSwitches: { voluntary: number; nonvoluntary: number }
  loadSwitches: { voluntary: number; nonvoluntary: number }
  /** Each load thread's own loop and GC (`LoopMinute`), and the main thread's (the data plane's). */
  threadLoops: LoopMinute[]
  mainLoop: LoopMinute | undefined
  /**
   * What the load process's clock tick thread saw in the minute (tools/soak/clock-watch.ts): steps
   * of the wall clock against the monotonic one (count, sum in ms) and gaps of the whole process
   * (count, longest in ms): the host's hand in the minute, labelled in the events too; apart, the
   * gaps in which the tick thread waited for a core (the guest's own contention, not labelled).
   */
  wallSteps: number
  wallStepMs: number
  processGaps: number
  processGapMaxMs: number
  tickWaits: number
  events: string[]
}

export interface Verdict {
  readonly criterion: string
  readonly pass: boolean
  readonly detail: string
}

export interface SoakResult {
  readonly rows: MinuteRow[]
  readonly verdicts: Verdict[]
  readonly totals: Record<string, number>
  readonly errorCodes: Record<string, number>
  readonly pass: boolean
}

const STREAMS_PARTITIONS = 8
const DATA_TOPIC = 'soak-data'
const DATA_PARTITIONS = 4
const CONSUMER_GROUP = 'soak-consumers'
const RETRY_MS = 250

/** One second of the server process, as tools/soak/report-memory.mjs writes it. */
interface ServerSecond {
  readonly at: number
  readonly pid: number
  readonly rss: number
  readonly heapUsed: number
  readonly heapTotal: number
  readonly external: number
  readonly arrayBuffers: number
  readonly loopMaxMs: number
  readonly loopP99Ms: number
  readonly elu: number
  readonly cpuMs: number
  readonly mainCpuMs?: number
  readonly mainWaitMs?: number
  readonly gcCount: number
  readonly gcMs: number
  readonly gcMaxMs: number
  readonly scavenges: number
  readonly scavengeMs: number
  readonly markCompacts: number
  readonly markCompactMs: number
  readonly newSpace: number
  readonly oldSpaceUsed?: number
  readonly oldSpace?: number
  readonly longCpu: number
  readonly longCpuGc: number
  readonly longWait: number
  readonly longOther: number
  readonly longCpuMaxMs: number
}

/** The anonymous memory of a process in KiB (/proc/<pid>/smaps_rollup), where Linux has it. */
function anonymousKb(pid: number): number | undefined {
  try {
    const m = /^Anonymous:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))
    return m === null ? undefined : Number(m[1])
  } catch {
    return undefined
  }
}

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'topograph-soak-'))
  const memoryFile = join(dataDir, 'server-memory.json')
  const plugin = pluginFiles('sqlite')
  const port = await freeLoopbackPort()
  const sessionTimeoutMs = Number(o.server['group.streams.session.timeout.ms'] ?? 45_000)
  const heartbeatIntervalMs = Number(
    o.server['group.streams.heartbeat.interval.ms'] ?? STREAMS_GROUP_CONFIG_DEFAULTS.heartbeatIntervalMs,
  )
  const settings: Record<string, string> = {
    listeners: `PLAINTEXT://127.0.0.1:${port}`,
    'data.dir': join(dataDir, 'data'),
    'coordinator.storage': 'sqlite',
    ...plugin.configs,
    ...o.server,
  }
  const startServer = () =>
    startTopographProcess(settings, {
      startTimeoutMs: 120_000,
      nodeArgs: [
        // As `topograph start` runs installed or by `npm start` (the young generation's fixed size).
        ...cliNodeOptions(),
        // SOAK_SERVER_NODE_ARGS: more Node or V8 options for each server process, space-separated
        // (a probe's `--trace-gc`, or a heap option tried before it goes on the CLI's #! line).
        ...(process.env.SOAK_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
        '--import',
        './tools/soak/report-memory.mjs',
        // SOAK_SERVER_CPU_PROF=DIR: a CPU profile of each server process in DIR (one per process),
        // sampled every SOAK_SERVER_CPU_PROF_US µs (default 2000). SOAK_SERVER_TURNS_FILE=FILE (passed
        // on with the environment) keeps the server's long turns, to set beside the profiles with
        // tools/soak/long-turns.ts.
        ...(process.env.SOAK_SERVER_CPU_PROF
          ? [
              '--cpu-prof',
              '--cpu-prof-interval',
              process.env.SOAK_SERVER_CPU_PROF_US ?? '2000',
              '--cpu-prof-dir',
              process.env.SOAK_SERVER_CPU_PROF,
            ]
          : []),
      ],
      // Not TOPOGRAPH_*: the server reads those as settings.
      env: { SOAK_SERVER_MEMORY_FILE: memoryFile },
    })
  const outage = {
    set: { '*': { action: 'transient' as const, message: 'backend unavailable' } },
    get: { '*': { action: 'transient' as const, message: 'backend unavailable' } },
  }

  const rows: MinuteRow[] = []
  const errorCodes: Record<string, number> = {}
  const totals = {
    heartbeats: 0,
    fenced: 0,
    fencedInFlight: 0,
    fencedAfterGap: 0,
    topologyFenced: 0,
    retriable: 0,
    otherErrors: 0,
    connectionLossesOutsideRestart: 0,
    joins: 0,
    leaves: 0,
    leavesLost: 0,
    pushesOk: 0,
    pushesFailed: 0,
    intervalsMoved: 0,
    steadySends: 0,
    earlyTimers: 0,
    phaseCreepUs: 0,
    ceilingHeartbeats: 0,
    ceilingFailures: 0,
    sendsMs1: 0,
    sendsMs2: 0,
    sendsMs3: 0,
    sendsMs4Plus: 0,
    produced: 0,
    consumed: 0,
    consumerFences: 0,
    producerErrors: 0,
    restartMs: 0,
    stopExitCode: 0,
  }
  const countError = (what: string, code: number) => {
    const k = `${what} ${code}`
    errorCodes[k] = (errorCodes[k] ?? 0) + 1
  }
  const newRow = (minute: number): MinuteRow => ({
    minute,
    closedAt: Number.NaN,
    heartbeats: 0,
    p50: Number.NaN,
    p99: Number.NaN,
    p99Handled: Number.NaN,
    ceilingP50: Number.NaN,
    ceilingP99: Number.NaN,
    p99FirstInMs: Number.NaN,
    changedHeartbeats: 0,
    p50Changed: Number.NaN,
    p99Changed: Number.NaN,
    p99LaterInMs: Number.NaN,
    p99OverCeiling: Number.NaN,
    p99AboveCeiling: Number.NaN,
    ceilingCpuPerHeartbeatUs: Number.NaN,
    ceilingHeartbeats: 0,
    ceilingFailures: 0,
    fenced: 0,
    fencedInFlight: 0,
    fencedAfterGap: 0,
    topologyFenced: 0,
    retriable: 0,
    otherErrors: 0,
    joins: 0,
    leaves: 0,
    pushesOk: 0,
    pushesFailed: 0,
    intervalsMoved: 0,
    steadySends: 0,
    earlyTimers: 0,
    phaseCreepUs: 0,
    sendsMs1: 0,
    sendsMs2: 0,
    sendsMs3: 0,
    sendsMs4Plus: 0,
    produced: 0,
    consumed: 0,
    rssMb: Number.NaN,
    rssMaxMb: Number.NaN,
    heapMb: Number.NaN,
    heapTotalMb: Number.NaN,
    externalMb: Number.NaN,
    anonMb: Number.NaN,
    rssSamples: [],
    heapSamples: [],
    heapTotalSamples: [],
    externalSamples: [],
    anonSamples: [],
    serverLoopMaxMs: Number.NaN,
    serverElu: Number.NaN,
    serverCpuPerHeartbeatUs: Number.NaN,
    serverMainCpuPerHeartbeatUs: Number.NaN,
    serverMainWaitMs: Number.NaN,
    gcMaxMs: Number.NaN,
    gcTotalMs: Number.NaN,
    scavenges: Number.NaN,
    scavengeMs: Number.NaN,
    markCompacts: Number.NaN,
    markCompactMs: Number.NaN,
    newSpaceMb: Number.NaN,
    oldSpaceMb: Number.NaN,
    oldSpaceCommittedMb: Number.NaN,
    longCpu: Number.NaN,
    longCpuGc: Number.NaN,
    longWait: Number.NaN,
    longOther: Number.NaN,
    longCpuMaxMs: Number.NaN,
    sendsMax100ms: Number.NaN,
    sendsTopTenthShare: Number.NaN,
    loadavg: Number.NaN,
    loopP99Ms: Number.NaN,
    loopMaxMs: Number.NaN,
    loadGcMaxMs: Number.NaN,
    loadScavenges: Number.NaN,
    loadMarkCompacts: Number.NaN,
    loadHeapMb: Number.NaN,
    loadCpuMs: Number.NaN,
    loadRunWaitMs: Number.NaN,
    speedProbeUs: Number.NaN,
    speedProbeP90Us: Number.NaN,
    memoryProbeNs: Number.NaN,
    loopbackUs: Number.NaN,
    clockNs: Number.NaN,
    syscallNs: Number.NaN,
    stealMs: Number.NaN,
    machineBusyMs: Number.NaN,
    outsideSoakMs: Number.NaN,
    softirqMs: Number.NaN,
    fileRefaults: Number.NaN,
    toHostMib: Number.NaN,
    serverSwitches: { voluntary: Number.NaN, nonvoluntary: Number.NaN },
    loadSwitches: { voluntary: Number.NaN, nonvoluntary: Number.NaN },
    threadLoops: [],
    mainLoop: undefined,
    wallSteps: 0,
    wallStepMs: 0,
    processGaps: 0,
    processGapMaxMs: 0,
    tickWaits: 0,
    events: [],
  })
  // Minute -1 is the set-up (joining every member); the measured minutes are 0..M-1.
  let row = newRow(-1)
  let restarting = false
  /**
   * How long after the restarted server listened again each member whose heartbeat had failed while
   * it was down sent its first heartbeat that was answered.
   */
  const restartReturns: number[] = []
  let stopping = false
  let stopProducing = false
  const serverOutput: string[] = []

  // The ceiling's process first: it holds nothing, and a server that fails to start stops it.
  const ceiling = o.ceilingMembers > 0 ? await startCeiling(heartbeatIntervalMs) : undefined
  let server: TopographProcess
  try {
    server = await startServer()
  } catch (e) {
    await ceiling?.stop()
    plugin.remove()
    rmSync(dataDir, { recursive: true, force: true })
    throw e
  }
  /** The streams members' application instances: one a load thread (or one on this thread). */
  const threads: LoadThread[] = []
  /** Connections of the data plane, stopped with the others (a live one reconnects forever). */
  const dataClients: ReconnectingClient[] = []
  const admin = new ReconnectingClient(port)
  // This thread's own loop and GC: the data plane's and the rows', and the members' too with
  // `loadThreads` 0 (then the members' thread reports the same loop).
  const mainLoop = new LoopMonitor()
  // The host's hand in each minute: wall-clock steps and gaps of the whole load process, seen by a
  // tick thread of its own (tools/soak/clock-watch.ts) and added to the minute's row.
  const clockMinute = new ClockMinute()
  const clockThread = startClockThread((e) => clockMinute.add(e))
  /** What each thread counted over the run, once stopped. */
  let threadTotals: MemberLoadTotals[] | undefined
  const stopThreads = async () => {
    if (threadTotals === undefined) {
      // Every thread is stopped even when one fails (its error is thrown once all are).
      const settled = await Promise.allSettled(threads.map((t) => t.stop()))
      const failed = settled.find((x) => x.status === 'rejected')
      if (failed !== undefined) throw failed.reason
      threadTotals = settled.map((x) => (x as PromiseFulfilledResult<MemberLoadTotals>).value)
    }
    return threadTotals
  }

  try {
    await admin.start()
    // 1. Topics: the streams groups' input and the data plane's topic.
    const created = await admin.request(
      19,
      7,
      p.createCreateTopicsRequest({
        topics: [
          p.createCreateTopicsRequestCreatableTopic({
            name: STREAMS_TOPIC,
            numPartitions: STREAMS_PARTITIONS,
            replicationFactor: -1,
          }),
          p.createCreateTopicsRequestCreatableTopic({
            name: DATA_TOPIC,
            numPartitions: DATA_PARTITIONS,
            replicationFactor: -1,
          }),
        ],
        timeoutMs: 30_000,
      }),
    )
    for (const t of created.topics) {
      if (t.errorCode !== 0) throw new Error(`CreateTopics ${t.name}: error ${t.errorCode}`)
    }
    const dataTopicId = created.topics.find((t) => t.name === DATA_TOPIC)?.topicId as string

    // 2. Streams members: the groups and connections shared out over the load threads, each an
    // application instance that joins its members, spread over 5 s.
    // The ceiling members are shared out over the same threads, each thread's on a connection of
    // its own to the ceiling.
    const plan = splitLoad(o.groups, o.connections, Math.max(1, o.loadThreads))
    const ceilingShares = splitCeiling(ceiling === undefined ? 0 : o.ceilingMembers, plan.length)
    plan.forEach((part, index) => {
      const config = {
        port,
        index,
        groups: part.groups,
        connections: part.connections,
        members: o.members,
        totalGroups: o.groups,
        sessionTimeoutMs,
        ceilingPort: ceiling?.port,
        ceilingMembers: ceilingShares[index],
        ceilingIntervalMs: heartbeatIntervalMs,
        spreadSends: o.spreadSends === true,
      }
      threads.push(o.loadThreads === 0 ? inProcessThread(config, o.log) : workerThread(config, o.log))
    })
    const joined = await Promise.all(threads.map((t) => t.join()))
    o.log(
      `set-up: ${joined.reduce((x, y) => x + y, 0)} members joined on ${o.loadThreads === 0 ? 'the main thread' : `${threads.length} load thread${threads.length === 1 ? '' : 's'}`} (${joined.join(' / ')})`,
    )

    // 3. Data plane: idempotent producers, and a consumer group (KIP-848) reading what they write.
    const acked = new SeqCounts() // by producer index and sequence number
    const dataClient = new ReconnectingClient(port, () => {
      if (!restarting) totals.connectionLossesOutsideRestart++
    })
    dataClients.push(dataClient)
    await dataClient.start()
    const produceLoop = async (index: number) => {
      let producerId = -1
      let producerEpoch = -1
      let seq = 0
      const sequences = new Array<number>(DATA_PARTITIONS).fill(0)
      let partition = index % DATA_PARTITIONS
      while (!stopping && !stopProducing) {
        if (producerId < 0) {
          try {
            const r = await dataClient.request(
              22,
              4,
              p.createInitProducerIdRequest({ transactionalId: null, transactionTimeoutMs: 60_000 }),
            )
            if (r.errorCode !== 0) {
              countError('init-producer-id', r.errorCode)
              await sleep(RETRY_MS)
              continue
            }
            producerId = Number(r.producerId)
            producerEpoch = r.producerEpoch
            sequences.fill(0)
          } catch {
            await sleep(RETRY_MS)
            continue
          }
        }
        const count = 10
        const values = Array.from({ length: count }, (_, i) => `${seq + i}`)
        const batch = makeBatch(
          values.map((v) => ({ key: `p${index}`, value: v, timestamp: Date.now() })),
          { producerId, producerEpoch, baseSequence: sequences[partition] },
        )
        // Sent until answered: a retry carries the same batch and sequence, as an idempotent
        // producer's does, so the broker must write it once.
        for (;;) {
          try {
            const r = await dataClient.request(
              0,
              9,
              p.createProduceRequest({
                acks: -1,
                timeoutMs: 30_000,
                topicData: [
                  p.createProduceRequestTopicProduceData({
                    name: DATA_TOPIC,
                    partitionData: [
                      p.createProduceRequestPartitionProduceData({ index: partition, records: batch }),
                    ],
                  }),
                ],
              }),
            )
            const code = r.responses[0].partitionResponses[0].errorCode
            if (code === E.NONE || code === E.DUPLICATE_SEQUENCE_NUMBER) {
              for (let i = 0; i < count; i++) acked.add(index, seq + i)
              row.produced += count
              totals.produced += count
              break
            }
            if (RETRIABLE.has(code)) {
              await sleep(RETRY_MS)
              continue
            }
            // Anything else is a producer error (OutOfOrderSequence, UnknownProducerId...): the
            // records of this batch are not acked, and the producer starts over with a new id.
            countError('produce', code)
            totals.producerErrors++
            producerId = -1
            break
          } catch (e) {
            if (!(e instanceof ConnectionClosedError)) throw e
            await sleep(RETRY_MS)
          }
        }
        seq += count
        sequences[partition] += count
        partition = (partition + 1) % DATA_PARTITIONS
        await sleep(100)
      }
    }

    const consumed = new SeqCounts() // times consumed, by producer index and sequence number
    const consumerLoop = async (index: number) => {
      const memberId = `soak-consumer-${index}`
      let epoch = 0
      let owned: number[] = []
      const positions = new Map<number, number>()
      let committed = new Map<number, number>()
      let nextHeartbeat = 0
      let nextCommit = 0
      while (!stopping) {
        const now = performance.now()
        try {
          if (now >= nextHeartbeat) {
            const joining = epoch === 0
            const r = await dataClient.request(
              68,
              1,
              p.createConsumerGroupHeartbeatRequest({
                groupId: CONSUMER_GROUP,
                memberId,
                memberEpoch: epoch,
                rebalanceTimeoutMs: joining ? 30_000 : -1,
                subscribedTopicNames: joining ? [DATA_TOPIC] : null,
                topicPartitions: joining
                  ? []
                  : [
                      p.createConsumerGroupHeartbeatRequestTopicPartitions({
                        topicId: dataTopicId,
                        partitions: owned,
                      }),
                    ],
              }),
            )
            if (r.errorCode === E.NONE) {
              epoch = r.memberEpoch
              nextHeartbeat = now + r.heartbeatIntervalMs
              if (r.assignment !== null) {
                owned = r.assignment.topicPartitions.flatMap((t) => t.partitions)
                for (const k of [...positions.keys()]) if (!owned.includes(k)) positions.delete(k)
              }
            } else if (r.errorCode === E.FENCED_MEMBER_EPOCH || r.errorCode === E.UNKNOWN_MEMBER_ID) {
              totals.consumerFences++
              countError('consumer-heartbeat', r.errorCode)
              epoch = 0
              owned = []
              positions.clear()
              nextHeartbeat = 0
            } else {
              if (!RETRIABLE.has(r.errorCode)) countError('consumer-heartbeat', r.errorCode)
              nextHeartbeat = now + RETRY_MS
            }
          }
          const missing = owned.filter((q) => !positions.has(q))
          if (missing.length > 0 && epoch > 0) {
            const r = await dataClient.request(
              9,
              9,
              p.createOffsetFetchRequest({
                groups: [
                  p.createOffsetFetchRequestOffsetFetchRequestGroup({
                    groupId: CONSUMER_GROUP,
                    memberId,
                    memberEpoch: epoch,
                    topics: [
                      p.createOffsetFetchRequestOffsetFetchRequestTopics({
                        name: DATA_TOPIC,
                        partitionIndexes: missing,
                      }),
                    ],
                  }),
                ],
              }),
            )
            const g = r.groups[0]
            if (g.errorCode === 0) {
              for (const t of g.topics)
                for (const x of t.partitions) {
                  if (x.errorCode === 0) {
                    const at = Number(x.committedOffset)
                    positions.set(x.partitionIndex, Math.max(at, 0))
                    committed.set(x.partitionIndex, at)
                  }
                }
            } else if (!RETRIABLE.has(g.errorCode) && g.errorCode !== E.STALE_MEMBER_EPOCH) {
              countError('offset-fetch', g.errorCode)
            }
          }
          if (positions.size === 0) {
            await sleep(100)
            continue
          }
          const r = await dataClient.request(
            1,
            12,
            p.createFetchRequest({
              replicaId: -1,
              maxWaitMs: 200,
              minBytes: 1,
              maxBytes: 1_048_576,
              topics: [
                p.createFetchRequestFetchTopic({
                  topic: DATA_TOPIC,
                  partitions: [...positions].map(([partition, at]) =>
                    p.createFetchRequestFetchPartition({
                      partition,
                      fetchOffset: BigInt(at),
                      partitionMaxBytes: 262_144,
                    }),
                  ),
                }),
              ],
            }),
          )
          for (const t of r.responses)
            for (const x of t.partitions) {
              if (x.errorCode !== 0) {
                if (!RETRIABLE.has(x.errorCode)) countError('fetch', x.errorCode)
                continue
              }
              if (!positions.has(x.partitionIndex)) continue
              for (const rec of readRecords(x.records)) {
                if (rec.offset < (positions.get(x.partitionIndex) as number)) continue
                consumed.addRecord(rec.key, rec.value)
                row.consumed++
                totals.consumed++
                positions.set(x.partitionIndex, rec.offset + 1)
              }
            }
          if (performance.now() >= nextCommit && epoch > 0) {
            nextCommit = performance.now() + 1000
            const changed = [...positions].filter(([q, at]) => committed.get(q) !== at)
            if (changed.length > 0) {
              const c = await dataClient.request(
                8,
                9,
                p.createOffsetCommitRequest({
                  groupId: CONSUMER_GROUP,
                  generationIdOrMemberEpoch: epoch,
                  memberId,
                  topics: [
                    p.createOffsetCommitRequestOffsetCommitRequestTopic({
                      name: DATA_TOPIC,
                      partitions: changed.map(([q, at]) =>
                        p.createOffsetCommitRequestOffsetCommitRequestPartition({
                          partitionIndex: q,
                          committedOffset: BigInt(at),
                        }),
                      ),
                    }),
                  ],
                }),
              )
              const next = new Map(committed)
              for (const x of c.topics[0].partitions) {
                if (x.errorCode === 0) {
                  const at = positions.get(x.partitionIndex)
                  if (at !== undefined) next.set(x.partitionIndex, at)
                } else if (!RETRIABLE.has(x.errorCode) && x.errorCode !== E.STALE_MEMBER_EPOCH) {
                  countError('offset-commit', x.errorCode)
                }
              }
              committed = next
            }
          }
        } catch (e) {
          if (!(e instanceof ConnectionClosedError)) throw e
          await sleep(RETRY_MS)
        }
      }
    }
    const producerLoops = Array.from({ length: o.producers }, (_, i) => produceLoop(i))
    const consumerLoops = Array.from({ length: o.consumers }, (_, i) => consumerLoop(i))

    // 4. The measured minutes: churn spread over each minute, the outage, the restart.
    // The server's lines (tools/soak/report-memory.mjs): one a second, appended; read from where
    // the last read stopped, kept until the minute closes.
    let serverFileAt = 0
    let serverLines: ServerSecond[] = []
    let lastServerLine: ServerSecond | undefined
    const readServerLines = () => {
      let text: string
      try {
        const fd = openSync(memoryFile, 'r')
        try {
          const size = fstatSync(fd).size
          if (size <= serverFileAt) return
          const buf = Buffer.alloc(size - serverFileAt)
          readSync(fd, buf, 0, buf.length, serverFileAt)
          const end = buf.lastIndexOf(10)
          if (end < 0) return
          serverFileAt += end + 1
          text = buf.subarray(0, end).toString('utf8')
        } finally {
          closeSync(fd)
        }
      } catch {
        return
      }
      for (const line of text.split('\n')) {
        const s = JSON.parse(line) as ServerSecond
        serverLines.push(s)
        lastServerLine = s
      }
    }
    // A row closes when every thread has handed over its minute: the threads' counts added, their
    // latency histograms merged, their sends added by 100-ms bucket of the wall clock.
    let ceilingCpuAt = ceiling === undefined ? 0 : await ceiling.cpuMs()
    // The machine's CPU time, the load process's own and the file refaults, from one row's close
    // to the next.
    let machineAt = machineCpuMs()
    let loadCpuAt = process.cpuUsage()
    let refaultsAt = fileRefaults()
    let reportingAt = pageReporting()
    const closeRow = async (r: MinuteRow) => {
      r.closedAt = Date.now()
      const clock = clockMinute.take()
      r.wallSteps = clock.wallSteps
      r.wallStepMs = clock.wallStepMs
      r.processGaps = clock.gaps
      r.processGapMaxMs = clock.longestGapMs
      r.tickWaits = clock.waits
      r.events.push(...clock.notes)
      const parts = await Promise.all(threads.map((t) => t.roll()))
      const merged = mergeThreadMinutes(parts)
      for (const k of THREAD_COUNTS) r[k] = merged[k]
      r.p50 = merged.latency.quantile(0.5)
      r.p99 = merged.latency.quantile(0.99)
      r.p99Handled = merged.handled.quantile(0.99)
      r.ceilingP50 = merged.ceiling.quantile(0.5)
      r.ceilingP99 = merged.ceiling.quantile(0.99)
      r.p99FirstInMs = merged.firstInMs.quantile(0.99)
      r.p99LaterInMs = merged.laterInMs.quantile(0.99)
      r.changedHeartbeats = merged.changed.count
      r.p50Changed = merged.changed.quantile(0.5)
      r.p99Changed = merged.changed.quantile(0.99)
      r.p99OverCeiling = r.p99 / r.ceilingP99
      r.p99AboveCeiling = r.p99 - r.ceilingP99
      let ceilingMinuteCpuMs = 0
      if (ceiling !== undefined) {
        const cpuMs = await ceiling.cpuMs()
        ceilingMinuteCpuMs = cpuMs - ceilingCpuAt
        if (r.ceilingHeartbeats > 0)
          r.ceilingCpuPerHeartbeatUs = (1000 * ceilingMinuteCpuMs) / r.ceilingHeartbeats
        ceilingCpuAt = cpuMs
      }
      const machineNow = machineCpuMs()
      const loadNow = process.cpuUsage()
      const refaultsNow = fileRefaults()
      const reportingNow = pageReporting()
      sampleMemory()
      const rss = r.rssSamples.sort((a, b) => a - b)
      r.rssMb = quantile(rss, 0.5)
      r.rssMaxMb = rss.length === 0 ? Number.NaN : rss[rss.length - 1]
      const median = (xs: number[]) =>
        quantile(
          xs.sort((a, b) => a - b),
          0.5,
        )
      r.heapMb = median(r.heapSamples)
      r.heapTotalMb = median(r.heapTotalSamples)
      r.externalMb = median(r.externalSamples)
      r.anonMb = median(r.anonSamples)
      const seconds = serverLines
      serverLines = []
      if (seconds.length > 0) {
        r.serverLoopMaxMs = Math.max(...seconds.map((x) => x.loopMaxMs))
        r.serverElu = median(seconds.map((x) => x.elu))
        r.gcMaxMs = Math.max(...seconds.map((x) => x.gcMaxMs))
        r.gcTotalMs = seconds.reduce((a, x) => a + x.gcMs, 0)
        const sum = (pick: (x: ServerSecond) => number) => seconds.reduce((a, x) => a + (pick(x) ?? 0), 0)
        r.scavenges = sum((x) => x.scavenges)
        r.scavengeMs = sum((x) => x.scavengeMs)
        r.markCompacts = sum((x) => x.markCompacts)
        r.markCompactMs = sum((x) => x.markCompactMs)
        r.newSpaceMb = median(seconds.map((x) => (x.newSpace ?? Number.NaN) / 1048576))
        r.oldSpaceMb = median(seconds.map((x) => (x.oldSpaceUsed ?? Number.NaN) / 1048576))
        r.oldSpaceCommittedMb = median(seconds.map((x) => (x.oldSpace ?? Number.NaN) / 1048576))
        r.longCpu = sum((x) => x.longCpu)
        r.longCpuGc = sum((x) => x.longCpuGc)
        r.longWait = sum((x) => x.longWait)
        r.longOther = sum((x) => x.longOther)
        r.longCpuMaxMs = Math.max(0, ...seconds.map((x) => x.longCpuMaxMs ?? 0))
        if (r.heartbeats > 0) {
          r.serverCpuPerHeartbeatUs = (1000 * seconds.reduce((a, x) => a + x.cpuMs, 0)) / r.heartbeats
          if (seconds.every((x) => x.mainCpuMs !== undefined))
            r.serverMainCpuPerHeartbeatUs = (1000 * sum((x) => x.mainCpuMs as number)) / r.heartbeats
        }
        if (seconds.every((x) => x.mainWaitMs !== undefined))
          r.serverMainWaitMs = sum((x) => x.mainWaitMs as number)
      }
      if (machineNow !== undefined && machineAt !== undefined) {
        r.machineBusyMs = machineNow.busyMs - machineAt.busyMs
        r.softirqMs = machineNow.softirqMs - machineAt.softirqMs
        r.stealMs = machineNow.stealMs - machineAt.stealMs
        const loadMs = (loadNow.user + loadNow.system - loadCpuAt.user - loadCpuAt.system) / 1000
        const serverMs = seconds.reduce((a, x) => a + x.cpuMs, 0)
        r.outsideSoakMs = r.machineBusyMs - loadMs - serverMs - ceilingMinuteCpuMs
      }
      machineAt = machineNow
      loadCpuAt = loadNow
      if (refaultsNow !== undefined && refaultsAt !== undefined) r.fileRefaults = refaultsNow - refaultsAt
      refaultsAt = refaultsNow
      if (reportingNow !== null && reportingAt !== null)
        r.toHostMib = (reportingNow.reportedKib - reportingAt.reportedKib) / 1024
      reportingAt = reportingNow
      const sends = bunching(merged.sendBuckets, o.minuteMs)
      r.sendsMax100ms = sends.max100ms
      r.sendsTopTenthShare = sends.topTenthShare
      r.loadavg = loadavg()[0]
      r.loopP99Ms = merged.loop.p99Ms
      r.loopMaxMs = merged.loop.maxMs
      r.loadGcMaxMs = merged.loop.gcMaxMs
      r.loadScavenges = merged.loop.scavenges
      r.loadMarkCompacts = merged.loop.markCompacts
      r.loadHeapMb = merged.loop.heapAfterMarkCompactMb
      r.loadCpuMs = merged.loop.cpuMs
      r.loadRunWaitMs = merged.loop.runWaitMs
      const speed = speedRounds.take()
      r.speedProbeUs = speed.fastestUs
      r.speedProbeP90Us = speed.p90Us
      r.memoryProbeNs = median(machineSamples.memoryNs)
      r.loopbackUs = median(machineSamples.loopbackUs)
      r.clockNs = median(machineSamples.clockNs)
      r.syscallNs = median(machineSamples.syscallNs)
      machineSamples = { memoryNs: [], loopbackUs: [], clockNs: [], syscallNs: [] }
      if (lastServerLine !== undefined) serverSwitches.follow(lastServerLine.pid)
      r.serverSwitches = serverSwitches.take()
      r.loadSwitches = loadSwitches.take()
      r.threadLoops = parts.map((x) => x.loop)
      r.mainLoop = mainLoop.take()
      o.log(formatRow(r))
      o.log(formatLoops(r))
    }
    const sampleMemory = () => {
      readServerLines()
      const mem = lastServerLine
      if (mem === undefined || restarting) return
      row.rssSamples.push(mem.rss / 1048576)
      row.heapSamples.push(mem.heapUsed / 1048576)
      row.heapTotalSamples.push(mem.heapTotal / 1048576)
      row.externalSamples.push(mem.external / 1048576)
      const anon = anonymousKb(mem.pid)
      if (anon !== undefined) row.anonSamples.push(anon / 1024)
    }
    const sampler = setInterval(sampleMemory, 5000).unref()
    // The machine's speed, three runs of the fixed work a second (about 0.3 ms of this thread's time).
    const speedRounds = new SpeedRounds()
    const speedProbe = setInterval(() => speedRounds.round(), 1000).unref()
    // What the speed probe does not feel (tools/soak/machine.ts): the memory walk (three runs of
    // about 4 ms), the clock reads, the empty system calls (three runs of about 3 ms) and five
    // loopback round trips every 5 s, the fastest of each.
    let machineSamples: { memoryNs: number[]; loopbackUs: number[]; clockNs: number[]; syscallNs: number[] } =
      {
        memoryNs: [],
        loopbackUs: [],
        clockNs: [],
        syscallNs: [],
      }
    memoryProbeNs(1) // builds the 64 MB walk before the first minute
    const loopback = await LoopbackProbe.open()
    const serverSwitches = new SwitchCounter(lastServerLine?.pid ?? -1)
    const loadSwitches = new SwitchCounter(process.pid)
    let machineProbing = false
    const machineProbe = setInterval(async () => {
      if (machineProbing) return
      machineProbing = true
      try {
        machineSamples.memoryNs.push(Math.min(memoryProbeNs(), memoryProbeNs(), memoryProbeNs()))
        machineSamples.clockNs.push(Math.min(clockProbeNs(), clockProbeNs(), clockProbeNs()))
        machineSamples.syscallNs.push(Math.min(syscallProbeNs(), syscallProbeNs(), syscallProbeNs()))
        let fastest = Number.POSITIVE_INFINITY
        for (let k = 0; k < 5; k++) fastest = Math.min(fastest, await loopback.roundTripUs())
        machineSamples.loopbackUs.push(fastest)
      } finally {
        machineProbing = false
      }
    }, 5000).unref()
    await closeRow(row)
    rows.push(row)
    o.log(`machine: ${pageReportingSetting(pageReporting())}`)
    o.log(HEADER)

    // Churn: replacements spread over each minute, handed to the threads in turn; each thread
    // replaces a member of one of its groups in a rolling upgrade (tools/soak/members.ts).
    const churnPerMinute = Math.max(1, Math.round((o.members * o.churnPercent) / 100))
    let churned = 0
    for (let minute = 0; minute < o.minutes; minute++) {
      row = newRow(minute)
      rows.push(row)
      const minuteStart = performance.now()
      if (minute === o.outageAt) {
        plugin.control(outage)
        row.events.push('plugin outage begins')
      }
      if (minute === o.outageAt + o.outageMinutes) {
        plugin.control({})
        row.events.push('plugin outage ends')
      }
      let restartDone: Promise<void> | undefined
      if (minute === o.restartAt) {
        restartDone = (async () => {
          await sleep(Math.floor(o.minuteMs / 4))
          restarting = true
          await Promise.all(threads.map((t) => t.restartBegins()))
          const t0 = performance.now()
          const exit = await server.stop(60_000)
          serverOutput.push(server.output())
          totals.stopExitCode = exit.code ?? -1
          server = await startServer()
          const listeningAgainAt = performance.now()
          const at = wallNow()
          await Promise.all(threads.map((t) => t.listeningAgain(at)))
          totals.restartMs = listeningAgainAt - t0
          row.events.push(
            `restart: stopped (exit ${exit.code}) and listening again in ${(totals.restartMs / 1000).toFixed(1)} s`,
          )
          // Stragglers of the old connections are counted with the restart for a few seconds more.
          await sleep(Math.min(5000, o.minuteMs / 2))
          restarting = false
          await Promise.all(threads.map((t) => t.restartEnds()))
        })()
      }
      for (let k = 0; k < churnPerMinute; k++) {
        const due = minuteStart + ((k + 0.5) * o.minuteMs) / churnPerMinute
        await sleep(Math.max(0, due - performance.now()))
        await threads[churned++ % threads.length].replaceOne()
      }
      await sleep(Math.max(0, minuteStart + o.minuteMs - performance.now()))
      if (restartDone !== undefined) {
        await restartDone
        for (const returns of await Promise.all(threads.map((t) => t.takeRestartReturns())))
          restartReturns.push(...returns)
        row.events.push(describeReturns(restartReturns))
      }
      await closeRow(row)
    }

    // 5. The end: every group's description stored and readable (StreamsGroupDescribe v1).
    row = newRow(o.minutes)
    const groupIds = Array.from({ length: o.groups }, (_, g) => `soak-group-${g}`)
    const describeAll = async () => {
      const statuses = new Map<
        string,
        { status: number; hasDescription: boolean; error: number; matches: boolean }
      >()
      for (let i = 0; i < groupIds.length; i += 100) {
        const r = await admin.request(
          89,
          1,
          p.createStreamsGroupDescribeRequest({
            groupIds: groupIds.slice(i, i + 100),
            includeTopologyDescription: true,
          }),
        )
        for (const g of r.groups)
          statuses.set(g.groupId, {
            status: g.topologyDescriptionStatus,
            hasDescription: g.topologyDescription !== null,
            error: g.errorCode,
            matches:
              g.topology !== null &&
              g.topologyDescription?.subtopologies[0]?.nodes.some(
                (n) => n.sinkTopic === sinkTopic(g.groupId, (g.topology as { epoch: number }).epoch),
              ) === true,
          })
      }
      return statuses
    }
    const endBy = performance.now() + Math.max(60_000, 2 * o.minuteMs)
    let statuses = await describeAll()
    const available = () =>
      [...statuses.values()].filter((s) => s.error === 0 && s.status === 3 && s.hasDescription && s.matches)
        .length
    while (available() < o.groups && performance.now() < endBy) {
      await sleep(2000)
      statuses = await describeAll()
    }
    const describedAt = performance.now()
    clearInterval(sampler)
    clearInterval(speedProbe)
    clearInterval(machineProbe)
    loopback.close()

    // Stop the load and let the data plane drain: the consumers read up to what was acked.
    stopProducing = true
    await Promise.all(producerLoops)
    const drainBy = performance.now() + 30_000
    while (performance.now() < drainBy && acked.missingFrom(consumed) > 0) await sleep(200)
    stopping = true
    await Promise.all(consumerLoops)
    // The members stop; what every thread counted over the run joins the totals.
    const deployed = new Array<number>(o.groups).fill(0)
    for (const t of await stopThreads()) {
      for (const k of [...THREAD_COUNTS, 'leavesLost', 'connectionLossesOutsideRestart'] as const)
        totals[k] += t[k]
      for (const [k, n] of Object.entries(t.errorCodes)) errorCodes[k] = (errorCodes[k] ?? 0) + n
      for (const [g, epoch] of t.deployed) deployed[g] = epoch
    }

    // 6. Records: every acked record in the log exactly once (read back from offset 0).
    const inLog = new SeqCounts()
    for (let partition = 0; partition < DATA_PARTITIONS; partition++) {
      let at = 0
      for (;;) {
        const r = await admin.request(
          1,
          12,
          p.createFetchRequest({
            replicaId: -1,
            maxWaitMs: 0,
            minBytes: 1,
            maxBytes: 8_388_608,
            topics: [
              p.createFetchRequestFetchTopic({
                topic: DATA_TOPIC,
                partitions: [
                  p.createFetchRequestFetchPartition({
                    partition,
                    fetchOffset: BigInt(at),
                    partitionMaxBytes: 4_194_304,
                  }),
                ],
              }),
            ],
          }),
        )
        const x = r.responses[0].partitions[0]
        if (x.errorCode !== 0)
          throw new Error(`reading ${DATA_TOPIC}-${partition} back: error ${x.errorCode}`)
        const recs = readRecords(x.records).filter((rec) => rec.offset >= at)
        if (recs.length === 0) break
        for (const rec of recs) {
          inLog.addRecord(rec.key, rec.value)
          at = rec.offset + 1
        }
      }
    }
    const lost = acked.missingFrom(inLog)
    const duplicated = inLog.extra()
    const notConsumed = acked.missingFrom(consumed)
    const consumedTwice = consumed.extra()

    // 7. Verdicts.
    const measured = rows.filter((r) => r.minute >= 0 && r.minute < o.minutes)
    const verdicts: Verdict[] = [
      {
        criterion: 'members fenced that kept heartbeating = 0',
        pass: totals.fenced === 0,
        detail: `${totals.fenced} (besides: ${totals.fencedInFlight} fenced across the restart before their first answered heartbeat after it, ${totals.fencedAfterGap} after the load itself sent nothing for longer than the session timeout)`,
      },
      ...flatnessVerdicts(measured, o),
      {
        criterion: 'every topology description stored and readable (StreamsGroupDescribe v1)',
        pass: available() === o.groups,
        detail: `${available()} of ${o.groups} groups have the description of their current topology epoch (${deployed.reduce((a, b) => a + b, 0)} rolling upgrades in the run), read ${((describedAt - (endBy - Math.max(60_000, 2 * o.minuteMs))) / 1000).toFixed(1)} s after the last minute`,
      },
      {
        criterion: 'records lost = 0',
        pass: lost === 0,
        detail: `${lost} of ${acked.size} acked records missing from the log`,
      },
      {
        criterion: 'records duplicated = 0',
        pass: duplicated === 0,
        detail: `${duplicated} extra copies in the log (consumers read ${consumedTwice} records twice across rebalances and the restart; ${notConsumed} acked records not consumed by the end)`,
      },
      {
        criterion: 'clean restart',
        pass: o.restartAt >= o.minutes || (totals.stopExitCode === 0 && totals.restartMs > 0),
        detail: `exit ${totals.stopExitCode}, listening again after ${(totals.restartMs / 1000).toFixed(1)} s`,
      },
      {
        criterion: 'no unexpected errors',
        pass:
          Object.keys(errorCodes).every((k) =>
            /^(heartbeat (25|110|132)|push |(consumer-heartbeat|offset-commit|offset-fetch) (25|110))/.test(
              k,
            ),
          ) &&
          totals.connectionLossesOutsideRestart === 0 &&
          totals.producerErrors === 0,
        detail: `error codes ${JSON.stringify(errorCodes)}; connections lost outside the restart ${totals.connectionLossesOutsideRestart}; producer errors ${totals.producerErrors}`,
      },
    ]
    const hard = verdicts.filter((v) => !v.criterion.includes('flat'))
    return {
      rows: measured,
      verdicts,
      totals: { ...totals, lost, duplicated, consumedTwice, notConsumed, acked: acked.size },
      errorCodes,
      pass: hard.every((v) => v.pass),
    }
  } finally {
    stopping = true
    mainLoop.stop()
    await clockThread.stop()
    await stopThreads().catch((e: unknown) => o.log(`stopping the load threads: ${(e as Error).message}`))
    for (const c of dataClients) c.stop()
    admin.stop()
    const exit = await server.stop(60_000)
    serverOutput.push(server.output())
    if (exit.code !== 0) o.log(`server exit ${exit.code} ${exit.signal ?? ''}`)
    await ceiling?.stop()
    if (o.serverLogFile !== undefined)
      writeFileSync(o.serverLogFile, serverOutput.join('\n--- restart ---\n'))
    plugin.remove()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/**
 * How far a figure of the rows strays from its median over the flatness window (minutes `flatFrom`
 * on, without the restart's minute): the larger of its highest and lowest minute's distance from the
 * median, as a share of the median. Minutes without the figure (NaN) are left out.
 */
export function flatness<R extends Pick<MinuteRow, 'minute'>>(
  rows: readonly R[],
  o: Pick<SoakOptions, 'flatFrom' | 'restartAt' | 'minutes'>,
  pick: (r: R) => number,
): { pass: boolean; detail: string } {
  const xs = rows
    .filter((r) => r.minute >= o.flatFrom && r.minute !== o.restartAt)
    .map(pick)
    .filter((x) => Number.isFinite(x))
  if (xs.length === 0) return { pass: true, detail: 'no minutes in the window' }
  const sorted = [...xs].sort((a, b) => a - b)
  const med = quantile(sorted, 0.5)
  const lo = sorted[0]
  const hi = sorted[sorted.length - 1]
  const dev = Math.max(Math.abs(hi - med), Math.abs(med - lo)) / Math.abs(med)
  return {
    pass: dev <= 0.1,
    detail: `median ${med.toFixed(2)}, min ${lo.toFixed(2)}, max ${hi.toFixed(2)}: ±${(100 * dev).toFixed(1)} % (minutes ${o.flatFrom}–${o.minutes - 1} without the restart minute ${o.restartAt})`,
  }
}

/**
 * The flatness criteria: the heartbeat p99 as measured (the criterion as written), the same p99
 * against the same minute's ceiling (tools/soak/ceiling.ts) when the run had one, divided by it and
 * less it, and the server's RSS. The ceiling's members share the load threads and the machine's
 * minute with the real ones, so what the machine does to a minute weighs on both, as in the
 * benchmarks' ratios to their ceiling.
 */
export function flatnessVerdicts(
  rows: readonly (Pick<MinuteRow, 'minute' | 'p99' | 'ceilingP99' | 'rssMb'> &
    Partial<Pick<MinuteRow, 'wallSteps' | 'processGaps'>>)[],
  o: Pick<SoakOptions, 'flatFrom' | 'restartAt' | 'minutes'>,
): Verdict[] {
  const p99 = flatness(rows, o, (r) => r.p99)
  const verdicts: Verdict[] = [
    {
      criterion: 'heartbeat p99 flat within ±10 %',
      pass: p99.pass,
      detail: `${p99.detail} ms${hostMinutes(rows, o)}`,
    },
  ]
  if (rows.some((r) => Number.isFinite(r.ceilingP99))) {
    const ratio = flatness(rows, o, (r) => r.p99 / r.ceilingP99)
    const above = flatness(rows, o, (r) => r.p99 - r.ceilingP99)
    verdicts.push(
      {
        criterion: 'heartbeat p99 against the same-minute ceiling flat within ±10 %',
        pass: ratio.pass,
        detail: `p99 ÷ the ceiling's p99: ${ratio.detail}`,
      },
      {
        criterion: 'heartbeat p99 above the same-minute ceiling flat within ±10 %',
        pass: above.pass,
        detail: `p99 − the ceiling's p99: ${above.detail} ms`,
      },
    )
  }
  const rss = flatness(rows, o, (r) => r.rssMb)
  verdicts.push({
    criterion: 'server RSS flat within ±10 %',
    pass: rss.pass,
    detail: `${rss.detail} MB${hostMinutes(rows, o)}`,
  })
  return verdicts
}

/**
 * The minutes of the flatness window in which the clock watch saw the host (a wall-clock step or a
 * gap of the whole load process), as a note for a verdict: they are counted in it, not left out.
 */
export function hostMinutes(
  rows: readonly (Pick<MinuteRow, 'minute'> & Partial<Pick<MinuteRow, 'wallSteps' | 'processGaps'>>)[],
  o: Pick<SoakOptions, 'flatFrom' | 'restartAt'>,
): string {
  const hit = rows
    .filter((r) => r.minute >= o.flatFrom && r.minute !== o.restartAt)
    .filter((r) => (r.wallSteps ?? 0) > 0 || (r.processGaps ?? 0) > 0)
    .map((r) => r.minute)
  return hit.length === 0
    ? ''
    : `; the host stepped the wall clock or stalled the load process in minute${hit.length > 1 ? 's' : ''} ${hit.join(', ')} (counted)`
}

/**
 * How the members whose heartbeat failed while the server was down came back: when each one sent
 * its first heartbeat after the restart that was answered (its phase from then on), from the moment
 * the server listened again (the others keep their own phase).
 */
export function describeReturns(msAfterListening: readonly number[]): string {
  if (msAfterListening.length === 0) return 'no member whose heartbeat failed came back in the minute'
  const sorted = [...msAfterListening].sort((a, b) => a - b)
  const s = (q: number) => (quantile(sorted, q) / 1000).toFixed(2)
  const firstSecond = sorted.filter((x) => x < 1000).length
  let busiest = 0
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= 100) j++
    busiest = Math.max(busiest, i - j + 1)
  }
  return (
    `${sorted.length} members back after failing across the restart, their first answered heartbeats sent ` +
    `p10/p50/p90 ${s(0.1)}/${s(0.5)}/${s(0.9)} s after listening again, ${firstSecond} in the first second, ${busiest} in the busiest 100 ms`
  )
}

export const HEADER =
  '| min | heartbeats | p50 ms | p99 ms | p99 ms at the handler | ceiling: heartbeats, p50 / p99 ms | p99 ÷ ceiling p99 | p99 − ceiling p99 ms | ceiling CPU µs / heartbeat | load-side loop p99 / max ms, GC max ms | load-side scavenges / mark-compacts, heap MB after the last | load-side CPU / waited for a core ms | load-side CPU µs / heartbeat sent | fenced | fenced (across restart / gap / old version) | retriable | other errors | joins | leaves | pushes ok / failed | intervals moved | load timers early, phase creep µs / interval | produced | consumed | RSS MB (median / max) | heap MB (used / total) | external MB | anon MB | server loop max ms | server ELU | server CPU µs / heartbeat | server main thread CPU µs / heartbeat, waited for a core ms | GC ms (max / total) | scavenges n / ms, mark-compacts n / ms | new space MB | old space MB (used / committed) | long turns on-CPU / GC / waiting / other (longest on-CPU ms) | sends per 100 ms (max / busiest tenth) | sends in a ms with 0 / 1 / 2 / ≥3 others of their thread | p99 ms of heartbeats sent first / after others in their ms | heartbeats that changed state: n, p50 / p99 ms | load | speed probe µs (fastest median / p90) | memory walk ns / step | loopback round trip µs | clock read ns | system call ns | steal ms | machine CPU ms: busy / outside the soak processes / softirq | file refaults, MiB handed to the host | context switches server vol / nonvol, load vol / nonvol | wall-clock steps n / ms, whole-process gaps n / longest ms, tick thread waits for a core n | events |\n' +
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |'

/** The load threads' CPU time per heartbeat they sent (members' and ceiling members'), in µs. */
export function loadCpuPerSend(
  r: Pick<MinuteRow, 'loadCpuMs' | 'sendsMs1' | 'sendsMs2' | 'sendsMs3' | 'sendsMs4Plus'>,
): string {
  const sent = r.sendsMs1 + r.sendsMs2 + r.sendsMs3 + r.sendsMs4Plus
  const us = (1000 * r.loadCpuMs) / sent
  return Number.isFinite(us) ? us.toFixed(0) : '—'
}

/** Shares of the minute's sends that went out alone, with 1, 2 and 3 or more others of their thread in their ms. */
export function burstShares(r: ThreadCounts): string {
  const all = r.sendsMs1 + r.sendsMs2 + r.sendsMs3 + r.sendsMs4Plus
  if (all === 0) return '—'
  const pc = (n: number) => ((100 * n) / all).toFixed(1)
  return `${pc(r.sendsMs1)} / ${pc(r.sendsMs2)} / ${pc(r.sendsMs3)} / ${pc(r.sendsMs4Plus)} %`
}

export function formatRow(r: MinuteRow): string {
  const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '—')
  const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(0)} %` : '—')
  return `| ${r.minute < 0 ? 'set-up' : r.minute} | ${r.heartbeats} | ${f(r.p50, 2)} | ${f(r.p99, 2)} | ${f(r.p99Handled, 2)} | ${r.ceilingHeartbeats}${r.ceilingFailures > 0 ? ` (${r.ceilingFailures} failed)` : ''}, ${f(r.ceilingP50, 2)} / ${f(r.ceilingP99, 2)} | ${f(r.p99OverCeiling, 2)} | ${f(r.p99AboveCeiling, 2)} | ${f(r.ceilingCpuPerHeartbeatUs, 0)} | ${f(r.loopP99Ms)} / ${f(r.loopMaxMs)}, ${f(r.loadGcMaxMs)} | ${f(r.loadScavenges, 0)} / ${f(r.loadMarkCompacts, 0)}, ${f(r.loadHeapMb)} | ${f(r.loadCpuMs, 0)} / ${f(r.loadRunWaitMs, 0)} | ${loadCpuPerSend(r)} | ${r.fenced} | ${r.fencedInFlight} / ${r.fencedAfterGap} / ${r.topologyFenced} | ${r.retriable} | ${r.otherErrors} | ${r.joins} | ${r.leaves} | ${r.pushesOk} / ${r.pushesFailed} | ${r.intervalsMoved} | ${pct(r.earlyTimers / r.steadySends)}, ${f(r.phaseCreepUs / r.steadySends, 0)} | ${r.produced} | ${r.consumed} | ${f(r.rssMb)} / ${f(r.rssMaxMb)} | ${f(r.heapMb)} / ${f(r.heapTotalMb)} | ${f(r.externalMb)} | ${f(r.anonMb)} | ${f(r.serverLoopMaxMs)} | ${pct(r.serverElu)} | ${f(r.serverCpuPerHeartbeatUs, 0)} | ${f(r.serverMainCpuPerHeartbeatUs, 0)}, ${f(r.serverMainWaitMs, 0)} | ${f(r.gcMaxMs)} / ${f(r.gcTotalMs, 0)} | ${f(r.scavenges, 0)} / ${f(r.scavengeMs, 0)}, ${f(r.markCompacts, 0)} / ${f(r.markCompactMs, 0)} | ${f(r.newSpaceMb)} | ${f(r.oldSpaceMb)} / ${f(r.oldSpaceCommittedMb)} | ${f(r.longCpu, 0)} / ${f(r.longCpuGc, 0)} / ${f(r.longWait, 0)} / ${f(r.longOther, 0)} (${f(r.longCpuMaxMs)}) | ${Number.isFinite(r.sendsMax100ms) ? r.sendsMax100ms : '—'} / ${pct(r.sendsTopTenthShare)} | ${burstShares(r)} | ${f(r.p99FirstInMs, 2)} / ${f(r.p99LaterInMs, 2)} | ${r.changedHeartbeats}, ${f(r.p50Changed, 2)} / ${f(r.p99Changed, 2)} | ${f(r.loadavg, 2)} | ${f(r.speedProbeUs, 0)} / ${f(r.speedProbeP90Us, 0)} | ${f(r.memoryProbeNs, 1)} | ${f(r.loopbackUs, 1)} | ${f(r.clockNs, 1)} | ${f(r.syscallNs, 0)} | ${f(r.stealMs, 0)} | ${f(r.machineBusyMs, 0)} / ${f(r.outsideSoakMs, 0)} / ${f(r.softirqMs, 0)} | ${f(r.fileRefaults, 0)}, ${f(r.toHostMib, 0)} | ${f(r.serverSwitches.voluntary, 0)} / ${f(r.serverSwitches.nonvoluntary, 0)}, ${f(r.loadSwitches.voluntary, 0)} / ${f(r.loadSwitches.nonvoluntary, 0)} | ${r.wallSteps} / ${f(r.wallStepMs, 0)}, ${r.processGaps} / ${f(r.processGapMaxMs, 0)}, ${r.tickWaits} | ${r.events.join('; ')} |`
}

/**
 * Each load thread's own loop in the row's minute (p99 and longest delay net of the 10-ms period,
 * longest GC pause, scavenges / mark-compacts, young generation's size), and the main thread's: the row's load-side columns
 * show the worst members' thread.
 */
export function formatLoops(r: MinuteRow): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—')
  const one = (name: string, l: LoopMinute) =>
    `${name} ${f(l.p99Ms)} / ${f(l.maxMs)}, ${f(l.gcMaxMs)} (${l.scavenges} / ${l.markCompacts}, ${f(l.newSpaceMb)}; ${f(l.cpuMs)} / ${f(l.runWaitMs)})`
  const threads = r.threadLoops.map((l, i) => one(`t${i}`, l))
  if (r.mainLoop !== undefined) threads.push(one('main', r.mainLoop))
  const ended = Number.isFinite(r.closedAt)
    ? ` (ended ${new Date(r.closedAt).toISOString().slice(11, 21)} UTC)`
    : ''
  return `  minute ${r.minute < 0 ? 'set-up' : r.minute}${ended} load loops, p99 / max ms, GC max ms (scavenges / mark-compacts, new space MB; CPU / waited for a core ms): ${threads.join('; ')}`
}
