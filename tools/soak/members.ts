// The soak's streams members: one `MemberLoad` is one application instance of the load, with its own
// connections and the members of its groups. The soak runs one on each of its load threads
// (tools/soak/load-thread.ts), or one on its main thread with `--load-threads 0`, so that an answer
// to a member waits in its socket only while that instance's own loop is busy, as it would with
// 10,000 members spread over many application instances rather than on one event loop.
//
// Each member keeps its own timing, as the Java client's does (each stream thread has its own
// consumer), backs off as the client does, and counts what happened to it in the instance's current
// minute (`ThreadMinute`, taken by `roll`). The heartbeat latency is stamped at the socket
// (`Timing` in client.ts): just before the request's frame is written and when the chunk that holds
// its answer is read.
import * as p from '../../src/protocol/index.js'
import { CEILING_MEMBER_EPOCH } from './ceiling.js'
import { ConnectionClosedError, clientBackoffMs, ReconnectingClient, type Timing } from './client.js'
import { E, RETRIABLE, rng, STREAMS_TOPIC, sleep, wallNow } from './common.js'
import {
  LatencyHistogram,
  LoopMonitor,
  SlowHeartbeats,
  THREAD_COUNTS,
  type ThreadCounts,
  type ThreadMinute,
} from './measures.js'
import { SendBursts, SendSlots } from './send-slots.js'

const RETRY_BACKOFF_MS = 100
const RETRY_BACKOFF_MAX_MS = 1000

/** What an instance is given: its groups and connections, and the run's sizes. */
export interface MemberLoadConfig {
  readonly port: number
  /** The load thread's index (0 on the main thread): seeds its generator. */
  readonly index: number
  /** The groups this instance runs (`splitLoad`), and its connections. */
  readonly groups: readonly number[]
  readonly connections: number
  /** The run's members and groups: a group has ⌊members / groups⌋ members, the first ones one more. */
  readonly members: number
  readonly totalGroups: number
  readonly sessionTimeoutMs: number
  /**
   * The ceiling (tools/soak/ceiling.ts): its port, the ceiling members this instance runs beside
   * its real ones (none without a port), and the heartbeat interval they keep (the server's).
   */
  readonly ceilingPort?: number
  readonly ceilingMembers: number
  readonly ceilingIntervalMs: number
  /**
   * Moves each phase this instance keeps (members' and ceiling members') by at most
   * `SPREAD_REACH_MS` onto the least-taken millisecond of the interval near it (`SendSlots`), so
   * that its timers do not send several heartbeats back to back; the intervals are unchanged.
   */
  readonly spreadSends?: boolean
}

/** How far a phase may be moved to spread the sends: a tenth of the coordinator's tolerance at 5 s. */
export const SPREAD_REACH_MS = 10

/** What an instance counted over the whole run, and the topology epoch it left each of its groups at. */
export interface MemberLoadTotals extends ThreadCounts {
  leavesLost: number
  connectionLossesOutsideRestart: number
  errorCodes: Record<string, number>
  /** [group, topology epoch deployed] for each of the instance's groups. */
  deployed: [number, number][]
}

function streamsTopology(epoch: number): p.StreamsGroupHeartbeatRequestTopology {
  return p.createStreamsGroupHeartbeatRequestTopology({
    epoch,
    subtopologies: [
      p.createStreamsGroupHeartbeatRequestSubtopology({
        subtopologyId: '0',
        sourceTopics: [STREAMS_TOPIC],
      }),
    ],
  })
}

/** The sink topic of a group's description at a topology epoch: the end check reads it back. */
export const sinkTopic = (groupId: string, epoch: number) => `${groupId}-output-v${epoch}`

/** The description a member pushes when asked: source → aggregate (store) → sink. */
function description(
  groupId: string,
  epoch: number,
): p.StreamsGroupTopologyDescriptionUpdateRequestTopologyDescription {
  const node = p.createStreamsGroupTopologyDescriptionUpdateRequestTopologyDescriptionNode
  return p.createStreamsGroupTopologyDescriptionUpdateRequestTopologyDescription({
    subtopologies: [
      p.createStreamsGroupTopologyDescriptionUpdateRequestTopologyDescriptionSubtopology({
        subtopologyId: '0',
        nodes: [
          node({
            name: 'KSTREAM-SOURCE-0000000000',
            nodeType: 1,
            sourceTopics: [STREAMS_TOPIC],
            successors: ['KSTREAM-AGGREGATE-0000000001'],
          }),
          node({
            name: 'KSTREAM-AGGREGATE-0000000001',
            nodeType: 2,
            stores: [`${groupId}-store`],
            successors: ['KSTREAM-SINK-0000000002'],
          }),
          node({ name: 'KSTREAM-SINK-0000000002', nodeType: 3, sinkTopic: sinkTopic(groupId, epoch) }),
        ],
      }),
    ],
    globalStores: [],
  })
}

type Tasks = p.StreamsGroupHeartbeatRequestTaskIds[]

/**
 * Where a member's next interval starts, as the Java client's `HeartbeatRequestState` has it: an
 * answer whose interval differs from the one the member holds restarts the timer at the answer's
 * arrival (`updateHeartbeatIntervalMs`); otherwise the timer was restarted when the heartbeat was
 * sent (`resetTimer()`), which for a heartbeat its timer sent is the time it fell due (`dueAt`),
 * whether this loop's timer fired after it or before it. After it: a late timer is this load
 * process's delay, not the member's (see `MemberLoad.#schedule`). Before it: Node counts a timer
 * from its loop's cached time, in whole milliseconds, so most of them fire up to about a millisecond
 * and a half early; the Java client's never does (`canSendRequest` waits for `isExpired()`), and
 * taking the early send's time would move every member's phase earlier by that much an interval
 * (about a millisecond every 10 s: 100 ms, the coordinator's tolerance for a heartbeat phase, in
 * 15–20 minutes). `dueAt` is undefined for a heartbeat no timer sent (a join, a retry at once).
 */
export function nextIntervalStart(
  intervalChanged: boolean,
  receivedAt: number,
  dueAt: number | undefined,
  sentAt: number,
): number {
  if (intervalChanged) return receivedAt
  return dueAt ?? sentAt
}

interface StreamsMember {
  readonly groupId: string
  readonly group: number
  readonly memberId: string
  readonly processId: string
  readonly client: ReconnectingClient
  /** Where the connection stamps this member's heartbeat (one in flight at a time), reused. */
  readonly timing: Timing
  /** The topology epoch of the application version this member runs. */
  readonly topologyEpoch: number
  epoch: number
  active: Tasks
  standby: Tasks
  warmup: Tasks
  /** The owned tasks changed since the server last heard them. */
  tasksDirty: boolean
  /**
   * The heartbeat interval the member holds: the last answer's, 0 before the first (as the Java
   * client's `HeartbeatRequestState` starts), so the first answer always counts as a change.
   */
  intervalMs: number
  timer: NodeJS.Timeout | undefined
  /** When the pending timer is due: the time this member's own client would send. */
  dueAt: number | undefined
  /** The millisecond slot of the interval the member's phase holds (`SendSlots`), when spread. */
  slot: number | undefined
  /** Failed attempts in a row (connection lost, coordinator not available): the back-off's exponent. */
  failedAttempts: number
  /** Whether the member must find its coordinator (FindCoordinator) before it heartbeats again. */
  coordinatorUnknown: boolean
  inFlight: boolean
  pushing: boolean
  /** The server restarted since this member's last answered heartbeat. */
  unansweredAtRestart: boolean
  lastAnsweredAt: number
  /** When this member's last heartbeat was sent. */
  lastSentAt: number
  /**
   * When the member's last heartbeat was sent (`wallNow`) if its answer left the interval as it was,
   * else NaN: the next heartbeat its timer sends measures how far the member's phase moved in that
   * interval (`phaseCreepUs`).
   */
  plainIntervalFromWall: number
  state: 'active' | 'leaving' | 'gone'
}

/**
 * A member of the ceiling (tools/soak/ceiling.ts): it heartbeats the bare server at the interval,
 * from its own phase, for the whole run, with the request of a real member in a steady group.
 */
interface CeilingMember {
  readonly groupId: string
  readonly memberId: string
  readonly timing: Timing
  timer: NodeJS.Timeout | undefined
  dueAt: number
}

/** A minute of this instance, as it fills. */
interface Minute extends ThreadCounts {
  readonly latency: LatencyHistogram
  readonly handled: LatencyHistogram
  readonly ceiling: LatencyHistogram
  readonly firstInMs: LatencyHistogram
  readonly laterInMs: LatencyHistogram
  readonly changed: LatencyHistogram
  readonly sendBuckets: Map<number, number>
}

const newMinute = (): Minute => ({
  ...(Object.fromEntries(THREAD_COUNTS.map((k) => [k, 0])) as ThreadCounts),
  latency: new LatencyHistogram(),
  handled: new LatencyHistogram(),
  ceiling: new LatencyHistogram(),
  firstInMs: new LatencyHistogram(),
  laterInMs: new LatencyHistogram(),
  changed: new LatencyHistogram(),
  sendBuckets: new Map(),
})

export class MemberLoad {
  readonly #o: MemberLoadConfig
  readonly #log: (line: string) => void
  readonly #random: () => number
  readonly #monitor = new LoopMonitor()
  readonly #clients: ReconnectingClient[] = []
  readonly #members: StreamsMember[] = []
  readonly #ceiling: CeilingMember[] = []
  #ceilingClient: ReconnectingClient | undefined
  /** The application version each of this instance's groups runs (its topology epoch), by group. */
  readonly #deployed = new Map<number, number>()
  #nextUpgrade = 0
  #memberSerial = 0
  #row: Minute = newMinute()
  readonly #totals: MemberLoadTotals
  #restarting = false
  #stopping = false
  /** When the restarted server listened again (`wallNow`), and when each member came back after it. */
  #listeningAgainAt: number | undefined
  #restartReturns: number[] = []
  readonly #bursts = new SendBursts()
  /** SOAK_SLOW_HEARTBEATS_FILE: each slow heartbeat with its time, for the server's records beside it. */
  readonly #slow = new SlowHeartbeats()
  readonly #slots: SendSlots | undefined

  constructor(config: MemberLoadConfig, log: (line: string) => void) {
    this.#o = config
    this.#slots =
      config.spreadSends === true && config.ceilingIntervalMs >= 1
        ? new SendSlots(config.ceilingIntervalMs, SPREAD_REACH_MS)
        : undefined
    this.#log = log
    this.#random = rng(config.members * 31 + config.totalGroups + 7919 * config.index)
    for (const g of config.groups) this.#deployed.set(g, 0)
    this.#totals = {
      ...(Object.fromEntries(THREAD_COUNTS.map((k) => [k, 0])) as ThreadCounts),
      leavesLost: 0,
      connectionLossesOutsideRestart: 0,
      errorCodes: {},
      deployed: [],
    }
  }

  /**
   * Opens the connections and joins every member of the instance's groups, spread over 5 s; the
   * ceiling members start first, each at a random phase of the interval.
   */
  async join(): Promise<number> {
    if (this.#o.ceilingPort !== undefined && this.#o.ceilingMembers > 0) {
      const client = new ReconnectingClient(this.#o.ceilingPort, undefined, true)
      await client.start()
      this.#ceilingClient = client
      for (let i = 0; i < this.#o.ceilingMembers; i++) {
        const c: CeilingMember = {
          groupId: `soak-ceiling-group-${this.#o.index}-${i % 10}`,
          memberId: `soak-ceiling-member-${this.#o.index}-${i}`,
          timing: { sentAt: 0, receivedAt: 0 },
          timer: undefined,
          dueAt: performance.now() + this.#random() * this.#o.ceilingIntervalMs,
        }
        if (this.#slots !== undefined) c.dueAt = this.#slots.place(c.dueAt).at
        this.#ceiling.push(c)
        this.#scheduleCeiling(c)
      }
    }
    for (let i = 0; i < this.#o.connections; i++) {
      const c = new ReconnectingClient(this.#o.port, () => {
        if (!this.#restarting) this.#totals.connectionLossesOutsideRestart++
      })
      await c.start()
      this.#clients.push(c)
    }
    const perGroup = Math.floor(this.#o.members / this.#o.totalGroups)
    const extra = this.#o.members - perGroup * this.#o.totalGroups
    const joinAll: Promise<void>[] = []
    for (const g of this.#o.groups) {
      const size = perGroup + (g < extra ? 1 : 0)
      for (let i = 0; i < size; i++) {
        const m = this.#addMember(g)
        joinAll.push(
          (async () => {
            await sleep(Math.floor(this.#random() * 5000))
            await this.#heartbeat(m)
          })(),
        )
      }
    }
    await Promise.all(joinAll)
    return this.#members.length
  }

  /**
   * Churn: replaces one member, as rolling upgrades do. The member replaced is one of a group in a
   * rolling upgrade (a new application version, topology epoch + 1, so the new members push a new
   * description); when no group of this instance is mid-upgrade, its next group in turn starts one.
   */
  replaceOne(): void {
    const leaver = this.#pickLeaver()
    if (leaver === undefined) return
    clearTimeout(leaver.timer)
    leaver.state = 'leaving'
    void this.#heartbeat(leaver)
    void this.#heartbeat(this.#addMember(leaver.group))
  }

  /** The server is about to stop: every member's next answer is its first after the restart. */
  restartBegins(): void {
    this.#restarting = true
    for (const m of this.#members) m.unansweredAtRestart = true
  }

  listeningAgain(at: number): void {
    this.#listeningAgainAt = at
  }

  /** Stragglers of the old connections are counted with the restart until this. */
  restartEnds(): void {
    this.#restarting = false
  }

  /** When each member whose heartbeat failed across the restart sent its first answered one, in ms after listening again. */
  takeRestartReturns(): number[] {
    const r = this.#restartReturns
    this.#restartReturns = []
    return r
  }

  /** Ends the current minute (returning what it counted) and starts the next. */
  roll(): ThreadMinute {
    this.#slow.flush()
    const bursts = this.#bursts.take()
    this.#add('sendsMs1', bursts[0])
    this.#add('sendsMs2', bursts[1])
    this.#add('sendsMs3', bursts[2])
    this.#add('sendsMs4Plus', bursts[3])
    const r = this.#row
    this.#row = newMinute()
    // Keep the member list to the live ones.
    for (let i = this.#members.length - 1; i >= 0; i--) {
      const m = this.#members[i]
      if (m.state !== 'gone') continue
      this.#releaseSlot(m)
      this.#members.splice(i, 1)
    }
    const counts = Object.fromEntries(THREAD_COUNTS.map((k) => [k, r[k]])) as ThreadCounts
    return {
      ...counts,
      latency: r.latency.counts(),
      handled: r.handled.counts(),
      ceiling: r.ceiling.counts(),
      firstInMs: r.firstInMs.counts(),
      laterInMs: r.laterInMs.counts(),
      changed: r.changed.counts(),
      sendBuckets: [...r.sendBuckets],
      loop: this.#monitor.take(),
    }
  }

  /** Stops every member and connection; what the instance counted over the run. */
  stop(): MemberLoadTotals {
    this.#stopping = true
    for (const m of this.#members) clearTimeout(m.timer)
    for (const c of this.#ceiling) clearTimeout(c.timer)
    for (const c of this.#clients) c.stop()
    this.#ceilingClient?.stop()
    this.#monitor.stop()
    return { ...this.#totals, deployed: [...this.#deployed] }
  }

  #countError(what: string, code: number): void {
    const k = `${what} ${code}`
    this.#totals.errorCodes[k] = (this.#totals.errorCodes[k] ?? 0) + 1
  }

  #count(k: (typeof THREAD_COUNTS)[number]): void {
    this.#add(k, 1)
  }

  #add(k: (typeof THREAD_COUNTS)[number], n: number): void {
    this.#row[k] += n
    this.#totals[k] += n
  }

  #addMember(g: number): StreamsMember {
    const n = this.#memberSerial++
    // Unique across the load's threads: the thread's index is in the serial's name.
    const id = `${this.#o.index}-${n}`
    const m: StreamsMember = {
      groupId: `soak-group-${g}`,
      group: g,
      memberId: `soak-member-${g}-${id}`,
      processId: `soak-process-${id}`,
      client: this.#clients[n % this.#clients.length],
      timing: { sentAt: 0, receivedAt: 0 },
      topologyEpoch: this.#deployed.get(g) as number,
      epoch: 0,
      active: [],
      standby: [],
      warmup: [],
      tasksDirty: true,
      intervalMs: 0,
      timer: undefined,
      dueAt: undefined,
      slot: undefined,
      failedAttempts: 0,
      coordinatorUnknown: false,
      inFlight: false,
      pushing: false,
      unansweredAtRestart: false,
      lastAnsweredAt: performance.now(),
      lastSentAt: performance.now(),
      plainIntervalFromWall: Number.NaN,
      state: 'active',
    }
    this.#members.push(m)
    return m
  }

  #pickLeaver(): StreamsMember | undefined {
    const candidates = (stale: boolean) =>
      this.#members.filter(
        (m) =>
          m.state === 'active' &&
          m.epoch > 0 &&
          !m.inFlight &&
          (!stale || m.topologyEpoch < (this.#deployed.get(m.group) as number)),
      )
    let live = candidates(true)
    if (live.length === 0) {
      const g = this.#o.groups[this.#nextUpgrade]
      this.#deployed.set(g, (this.#deployed.get(g) as number) + 1)
      this.#nextUpgrade = (this.#nextUpgrade + 1) % this.#o.groups.length
      live = candidates(true)
    }
    if (live.length === 0) live = candidates(false)
    return live.length === 0 ? undefined : live[Math.floor(this.#random() * live.length)]
  }

  // A member's heartbeat timer. A Kafka client runs each member (stream thread) on its own
  // thread, and resets the member's heartbeat timer when it sends a heartbeat
  // (`StreamsGroupHeartbeatRequestManager` → `HeartbeatRequestState.resetTimer()`): the next one
  // is due an interval after that send. Here one event loop sends for many members, so a timer
  // that fires late because this loop was busy must not move the member's phase (a late timer
  // here is this process's delay, not the member's): the next heartbeat is due an interval after
  // the time this one was due. Without that, every stall of this loop merges the phases of the
  // members whose timers fell in it, for good, and the load bunches up over a run.
  #schedule(m: StreamsMember, ms: number): void {
    clearTimeout(m.timer)
    m.dueAt = undefined
    if (m.state !== 'active' || this.#stopping) return
    m.dueAt = performance.now() + ms
    m.timer = setTimeout(() => this.#heartbeat(m), ms)
  }

  #releaseSlot(m: StreamsMember): void {
    if (m.slot !== undefined) this.#slots?.release(m.slot)
    m.slot = undefined
  }

  /**
   * When a member's next heartbeat is due: `due` itself, or with `spreadSends` the time on the slot
   * its phase holds; a phase that moved (a changed interval, a retry, a join) takes the least-taken
   * slot near it (`SendSlots.place`), a steady one keeps its slot, an interval later.
   */
  #spreadDue(m: StreamsMember, due: number): number {
    const slots = this.#slots
    if (slots === undefined || m.intervalMs !== slots.intervalMs) {
      this.#releaseSlot(m)
      return due
    }
    if (m.slot !== undefined && slots.slotOf(due) === m.slot) return due
    this.#releaseSlot(m)
    const placed = slots.place(due)
    m.slot = placed.slot
    return placed.at
  }

  #scheduleCeiling(c: CeilingMember): void {
    if (this.#stopping) return
    c.timer = setTimeout(() => this.#ceilingHeartbeat(c), Math.max(0, c.dueAt - performance.now()))
  }

  // A ceiling member's heartbeat: the request a real member sends in a steady group, its latency
  // stamped at the socket in the same way, and the next one due an interval after this one was due
  // (the real members' timing, `#schedule`). A failure is counted and waits for the next interval.
  #ceilingHeartbeat(c: CeilingMember): void {
    const client = this.#ceilingClient as ReconnectingClient
    const row = this.#row
    this.#bursts.note(performance.now())
    c.dueAt += this.#o.ceilingIntervalMs
    client
      .request(
        88,
        1,
        // The defaults are a steady member's: no topology, no tasks, no process (the same bytes).
        p.createStreamsGroupHeartbeatRequest({
          groupId: c.groupId,
          memberId: c.memberId,
          memberEpoch: CEILING_MEMBER_EPOCH,
        }),
        c.timing,
      )
      .then(
        (r) => {
          if (r.errorCode !== E.NONE) throw new Error(`the ceiling answered error ${r.errorCode}`)
          row.ceiling.record(c.timing.receivedAt - c.timing.sentAt)
          this.#slow.note(c.timing.sentAt, c.timing.receivedAt - c.timing.sentAt, true)
          this.#count('ceilingHeartbeats')
        },
        (e: unknown) => {
          if (!(e instanceof ConnectionClosedError)) throw e
          this.#count('ceilingFailures')
        },
      )
      .finally(() => this.#scheduleCeiling(c))
  }

  /**
   * After a failed heartbeat (its connection lost, or an error answer it does not rejoin for): the
   * Java client forgets what it last sent (`HeartbeatState.reset()` in
   * `StreamsGroupHeartbeatRequestManager`'s `onFailure` and `onErrorResponse`), so its next
   * heartbeat carries the owned tasks again. A heartbeat lost with its connection may have been
   * taken, its answer moving the member's epoch on; the coordinator takes the retry at the epoch
   * before only with the owned tasks in it, and fences it without them.
   */
  #forgetSent(m: StreamsMember): void {
    m.tasksDirty = true
  }

  /** After a failed attempt: the member's own back-off, as a Kafka client's. */
  #retryLater(m: StreamsMember): void {
    this.#schedule(
      m,
      clientBackoffMs(m.failedAttempts++, RETRY_BACKOFF_MS, RETRY_BACKOFF_MAX_MS, Math.random),
    )
  }

  // A Kafka client that lost its coordinator's connection (or was told NOT_COORDINATOR) marks the
  // coordinator unknown and sends FindCoordinator before its next heartbeat
  // (`CoordinatorRequestManager`); the heartbeat follows as soon as the coordinator is known.
  #findCoordinator(m: StreamsMember): Promise<boolean> {
    return m.client
      .request(10, 4, p.createFindCoordinatorRequest({ keyType: 0, coordinatorKeys: [m.groupId] }))
      .then(
        (r) => {
          const code = r.coordinators[0]?.errorCode ?? -1
          if (code === E.NONE) {
            m.coordinatorUnknown = false
            return true
          }
          this.#countError('find-coordinator', code)
          return false
        },
        (e: unknown) => {
          if (!(e instanceof ConnectionClosedError)) throw e
          return false
        },
      )
  }

  #push(m: StreamsMember): void {
    if (m.pushing) return
    m.pushing = true
    const topologyEpoch = m.topologyEpoch
    m.client
      .request(
        93,
        0,
        p.createStreamsGroupTopologyDescriptionUpdateRequest({
          groupId: m.groupId,
          memberId: m.memberId,
          topologyEpoch,
          topologyDescription: description(m.groupId, topologyEpoch),
        }),
      )
      .then(
        (r) => {
          if (r.errorCode === E.NONE) this.#count('pushesOk')
          else {
            this.#count('pushesFailed')
            this.#countError('push', r.errorCode)
          }
        },
        () => this.#count('pushesFailed'),
      )
      .finally(() => {
        m.pushing = false
      })
  }

  async #heartbeat(m: StreamsMember): Promise<void> {
    if (m.inFlight || m.state === 'gone') return
    // The time the member's own client would send this heartbeat (see `#schedule`).
    const dueAt = m.dueAt
    m.dueAt = undefined
    m.inFlight = true
    if (m.coordinatorUnknown) {
      const found = await this.#findCoordinator(m)
      if (!found) {
        m.inFlight = false
        if (m.state === 'leaving') {
          // The leave could not be sent: the session timeout removes the member.
          m.state = 'gone'
          this.#totals.leavesLost++
          return
        }
        this.#retryLater(m)
        return
      }
    }
    const joining = m.epoch === 0
    const leaving = m.state === 'leaving'
    const sendTasks = joining || m.tasksDirty
    const sentAt = performance.now()
    const sentBefore = this.#bursts.note(sentAt)
    // Bunching is counted on the wall clock, which every thread shares.
    const sentWall = wallNow()
    // How far the member's phase moved in the unchanged interval this send ends: its timer's
    // lateness now less its lateness then, so 0 on average for a client whose timer keeps its phase
    // (the coordinator moves a member back once it is 100 ms off its phase).
    if (dueAt !== undefined && !joining && !leaving && !Number.isNaN(m.plainIntervalFromWall)) {
      this.#count('steadySends')
      this.#add('phaseCreepUs', Math.round(1000 * (sentWall - m.plainIntervalFromWall - m.intervalMs)))
      if (sentAt < dueAt) this.#count('earlyTimers')
    }
    m.plainIntervalFromWall = Number.NaN
    const bucket = Math.floor(sentWall / 100)
    this.#row.sendBuckets.set(bucket, (this.#row.sendBuckets.get(bucket) ?? 0) + 1)
    // A gap between two sends longer than the session is the load's fault, not the server's.
    const sendGap = sentAt - m.lastSentAt
    m.lastSentAt = sentAt
    const sentRow = this.#row
    let r: p.StreamsGroupHeartbeatResponse
    try {
      r = await m.client.request(
        88,
        1,
        p.createStreamsGroupHeartbeatRequest({
          groupId: m.groupId,
          memberId: m.memberId,
          memberEpoch: leaving ? -1 : m.epoch,
          endpointInformationEpoch: 0,
          rebalanceTimeoutMs: joining ? 30_000 : -1,
          topology: joining && !leaving ? streamsTopology(m.topologyEpoch) : null,
          activeTasks: sendTasks && !leaving ? m.active : null,
          standbyTasks: sendTasks && !leaving ? m.standby : null,
          warmupTasks: sendTasks && !leaving ? m.warmup : null,
          processId: joining ? m.processId : null,
          clientTags: joining ? [] : null,
        }),
        m.timing,
      )
    } catch (e) {
      m.inFlight = false
      if (!(e instanceof ConnectionClosedError)) throw e
      if (leaving) {
        // The leave was lost with the connection: the session timeout removes the member.
        m.state = 'gone'
        this.#totals.leavesLost++
        return
      }
      m.coordinatorUnknown = true
      this.#forgetSent(m)
      this.#retryLater(m)
      return
    }
    m.inFlight = false
    const now = performance.now()
    const took = m.timing.receivedAt - m.timing.sentAt
    sentRow.latency.record(took)
    this.#slow.note(m.timing.sentAt, took, false)
    // Sent after others of its millisecond: their sending and answering may be in its latency.
    if (sentBefore === 0) sentRow.firstInMs.record(took)
    else sentRow.laterInMs.record(took)
    sentRow.handled.record(now - sentAt)
    const steady =
      !joining &&
      !leaving &&
      !sendTasks &&
      r.errorCode === E.NONE &&
      r.activeTasks === null &&
      r.standbyTasks === null &&
      r.warmupTasks === null &&
      !r.topologyDescriptionRequired
    if (!steady) sentRow.changed.record(took)
    this.#count('heartbeats')
    if (leaving) {
      m.state = 'gone'
      this.#count('leaves')
      return
    }
    if (r.errorCode === E.NONE) {
      if (joining) this.#count('joins')
      m.lastAnsweredAt = now
      // A member whose heartbeat failed while the server was down: when it sent the first
      // heartbeat answered after it (its phase from then on).
      if (m.unansweredAtRestart && m.failedAttempts > 0 && this.#listeningAgainAt !== undefined)
        this.#restartReturns.push(sentWall - this.#listeningAgainAt)
      m.unansweredAtRestart = false
      m.epoch = r.memberEpoch
      if (sendTasks) m.tasksDirty = false
      if (r.activeTasks !== null) {
        m.active = r.activeTasks
        m.tasksDirty = true
      }
      if (r.standbyTasks !== null) {
        m.standby = r.standbyTasks
        m.tasksDirty = true
      }
      if (r.warmupTasks !== null) {
        m.warmup = r.warmupTasks
        m.tasksDirty = true
      }
      // The Java client's rule (`HeartbeatRequestState.updateHeartbeatIntervalMs`): an answer
      // whose interval differs from the one the member holds resets the timer to it from the
      // answer's arrival; the same interval leaves the timer as the send set it (an interval
      // after the send, here after the time the send was due, see `#schedule`). The server's
      // spreading of phases answers with changed intervals, so both cases occur.
      const changed = r.heartbeatIntervalMs > 0 && r.heartbeatIntervalMs !== m.intervalMs
      if (changed && m.intervalMs > 0) this.#count('intervalsMoved')
      if (changed) m.intervalMs = r.heartbeatIntervalMs
      if (r.topologyDescriptionRequired) this.#push(m)
      m.failedAttempts = 0
      if (!changed) m.plainIntervalFromWall = sentWall
      const from = nextIntervalStart(changed, m.timing.receivedAt, dueAt, sentAt)
      this.#schedule(m, Math.max(0, this.#spreadDue(m, from + m.intervalMs) - now))
      return
    }
    if (r.errorCode === E.FENCED_MEMBER_EPOCH || r.errorCode === E.UNKNOWN_MEMBER_ID) {
      this.#countError('heartbeat', r.errorCode)
      if (m.unansweredAtRestart) this.#count('fencedInFlight')
      else if (sendGap > this.#o.sessionTimeoutMs) this.#count('fencedAfterGap')
      else {
        this.#count('fenced')
        if (this.#totals.fenced <= 20)
          this.#log(
            `fenced: ${m.memberId} of ${m.groupId} epoch ${m.epoch}, error ${r.errorCode} ${r.errorMessage ?? ''}, ` +
              `last answer ${((now - m.lastAnsweredAt) / 1000).toFixed(1)} s ago`,
          )
      }
      m.unansweredAtRestart = false
      m.epoch = 0
      m.active = []
      m.standby = []
      m.warmup = []
      m.tasksDirty = true
      this.#schedule(m, 0)
      return
    }
    if (
      r.errorCode === E.STREAMS_TOPOLOGY_FENCED &&
      m.topologyEpoch < (this.#deployed.get(m.group) as number)
    ) {
      // A member of the old version rejoining a group its upgrade has moved on: it is
      // replaced by a member of the new version, as the rolling upgrade would have done.
      this.#countError('heartbeat', r.errorCode)
      m.state = 'gone'
      this.#count('topologyFenced')
      void this.#heartbeat(this.#addMember(m.group))
      return
    }
    this.#forgetSent(m)
    if (RETRIABLE.has(r.errorCode)) {
      this.#row.retriable++
      if (r.errorCode === E.NOT_COORDINATOR || r.errorCode === E.COORDINATOR_NOT_AVAILABLE) {
        // The client finds the coordinator again, then heartbeats without a back-off.
        m.coordinatorUnknown = true
        m.failedAttempts = 0
        this.#schedule(m, 0)
        return
      }
    } else {
      this.#row.otherErrors++
      this.#countError('heartbeat', r.errorCode)
    }
    this.#retryLater(m)
  }
}
