/**
 * The deterministic simulation of the coordinator (see RELIABILITY.md, "Deterministic
 * simulation"). A seed gives a list of steps; running the list drives the real coordinator
 * services of ./world.ts with clients that join, heartbeat, push, describe, delete, commit offsets,
 * run transactions, leave and vanish, with store failures and stalls, plugin failures and hangs,
 * and restarts. After every step the invariants are checked; a failure is shrunk to the shortest
 * step list that still fails the same way.
 */
import { ErrorCode } from '../../src/protocol/errors.js'
import type { StreamsGroupHeartbeatRequest } from '../../src/protocol/generated/messages/StreamsGroupHeartbeatRequest.js'
import type { GroupCoordinatorShard } from '../../src/coordinator/shard/group-coordinator-shard.js'
import { coordinatorRecordSerde } from '../../src/coordinator/service/records.js'
import { transactionLogsStart } from '../../src/coordinator/service/transaction-coordinator-service.js'
import type { CoordinatorRecord } from '../../src/coordinator/storage/types.js'
import { CONSUMER_GROUPS, doubleOwners, groupSnapshot, STREAMS_GROUPS, txnSnapshot } from './snapshot.js'
import { NUM_SHARDS, PLUGIN_MODES, Rng, TXN_SHARDS, World } from './world.js'

/** One step: an operation and its numeric arguments (printed as `op a b`). */
export interface Step {
  readonly op: Op
  readonly a: number
  readonly b: number
}

const OPS = [
  ['sjoin', 8],
  ['sleave', 2],
  ['svanish', 2],
  ['sbump', 1],
  ['push', 6],
  ['describe', 3],
  ['delete', 2],
  ['cjoin', 5],
  ['cleave', 2],
  ['cvanish', 2],
  ['commit', 4],
  ['classic', 2],
  ['plugin', 4],
  ['sfail', 2],
  ['sstall', 2],
  ['srelease', 3],
  ['tick', 10],
  ['restart', 2],
  ['tinit', 3],
  ['tbegin', 3],
  ['toffsets', 3],
  ['tend', 3],
] as const
export type Op = (typeof OPS)[number][0]
const TOTAL_WEIGHT = OPS.reduce((n, [, w]) => n + w, 0)

/** The steps of a seed. */
export function generate(seed: number, count: number): Step[] {
  const rng = new Rng(seed)
  const out: Step[] = []
  for (let i = 0; i < count; i++) {
    let r = rng.int(TOTAL_WEIGHT)
    let op: Op = OPS[0][0]
    for (const [name, w] of OPS) {
      if (r < w) {
        op = name
        break
      }
      r -= w
    }
    out.push({ op, a: rng.int(1000), b: rng.int(1000) })
  }
  return out
}

export function formatStep(s: Step): string {
  return `${s.op} ${s.a} ${s.b}`
}

export function parseSteps(text: string): Step[] {
  return text
    .split(/[;\n]/)
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((l) => {
      const [op, a, b] = l.split(/\s+/)
      if (!OPS.some(([n]) => n === op)) throw new Error(`unknown step ${l}`)
      return { op: op as Op, a: Number(a ?? 0), b: Number(b ?? 0) }
    })
}

/** A broken invariant: its kind (what shrinking keeps) and the details. */
export class Violation extends Error {
  readonly kind: string
  constructor(kind: string, detail: string) {
    super(`${kind}: ${detail}`)
    this.kind = kind
  }
}

const TOPIC_IDS: Record<string, string> = {
  'in-a': 'AAAAAAAAAAAAAAAAAAAAAQ',
  'in-b': 'AAAAAAAAAAAAAAAAAAAAAg',
}
/** Longest a request may wait for its answer (write timeout, plugin deadline, rebalance timeouts). */
const ANSWER_WITHIN_MS = 60_000
/** A stalled append completes at the latest this long after it stalled (a slow disk, not a dead one). */
const STALL_MAX_MS = 20_000
const HEARTBEAT_MS = 1000
/** SIM_TRACE=1 prints every step and the streams groups after every slice. */
const TRACE = process.env.SIM_TRACE === '1'

interface StreamsClient {
  readonly kind: 'streams'
  readonly groupId: string
  readonly memberId: string
  readonly processId: string
  readonly source: string
  topologyEpoch: number
  memberEpoch: number
  tasks: Map<string, number[]>
  live: boolean
  inFlight: boolean
  lastHbMs: number
  wantsPush: boolean
  /** Rejoin with a full heartbeat (after a fence, or a topology change). */
  full: boolean
}

interface ConsumerClient {
  readonly kind: 'consumer'
  readonly groupId: string
  readonly memberId: string
  memberEpoch: number
  partitions: Map<string, number[]>
  live: boolean
  inFlight: boolean
  lastHbMs: number
}

type Client = StreamsClient | ConsumerClient

interface TxnClient {
  readonly transactionalId: string
  producerId: bigint
  producerEpoch: number
  /** idle: no transaction; open: partitions (and maybe offsets) added. */
  phase: 'none' | 'idle' | 'open'
  offsetsAdded: boolean
  inFlight: boolean
  /** Offsets committed in the open transaction (to check an abort drops them). */
  pendingOffsets: bigint[]
}

interface Pending {
  readonly id: number
  readonly what: string
  readonly sentMs: number
  readonly incarnation: number
}

export interface RunResult {
  readonly steps: number
  readonly violation: Violation | undefined
  readonly stepIndex: number
  readonly stats: Record<string, number>
}

/** Runs a step list against a fresh world; stops at the first violation. */
export async function runSteps(
  seed: number,
  steps: readonly Step[],
  prepare?: (world: World) => void,
): Promise<RunResult> {
  const sim = new Simulation(seed)
  prepare?.(sim.world)
  let index = -1
  try {
    await sim.boot()
    for (index = 0; index < steps.length; index++) await sim.step(steps[index])
    index = steps.length
    await sim.quiesce()
    return { steps: steps.length, violation: undefined, stepIndex: -1, stats: sim.stats }
  } catch (e) {
    const v =
      e instanceof Violation
        ? e
        : new Violation('exception', e instanceof Error ? (e.stack ?? e.message) : String(e))
    return { steps: steps.length, violation: v, stepIndex: index, stats: sim.stats }
  } finally {
    sim.world.kill()
  }
}

/**
 * Shrinks a failing list: drops chunks (halves, quarters, … single steps) while the run still
 * fails with the same kind of violation, for at most `budget` runs.
 */
export async function shrink(
  seed: number,
  steps: readonly Step[],
  kind: string,
  budget = 300,
  prepare?: (world: World) => void,
): Promise<Step[]> {
  let best = [...steps]
  let runs = 0
  const fails = async (candidate: Step[]) => {
    runs++
    const r = await runSteps(seed, candidate, prepare)
    return r.violation?.kind === kind
  }
  // Nothing after the failing step matters.
  let chunk = Math.max(1, Math.floor(best.length / 2))
  while (chunk >= 1 && runs < budget) {
    let removed = false
    for (let start = 0; start < best.length && runs < budget; ) {
      const candidate = [...best.slice(0, start), ...best.slice(start + chunk)]
      if (candidate.length > 0 && (await fails(candidate))) {
        best = candidate
        removed = true
      } else start += chunk
    }
    if (!removed) chunk = Math.floor(chunk / 2)
  }
  return best
}

class Simulation {
  readonly world: World
  readonly stats: Record<string, number> = {}
  readonly #clients: Client[] = []
  readonly #txns: TxnClient[] = []
  readonly #pending = new Map<number, Pending>()
  #nextRequest = 1
  #nextClient = 1
  /** Highest epochs seen per group (and member) while the group exists: they never go back. */
  readonly #epochs = new Map<string, number>()
  /** Transactional offsets whose transaction was aborted: never to be visible as committed. */
  readonly #abortedOffsets = new Set<bigint>()
  #nextOffset = 1n
  #stalledSince: number | undefined

  constructor(seed: number) {
    this.world = new World(seed)
    this.world.faults.onLanded = (shard, records) => this.#onLanded(shard, records)
    for (const id of ['t0', 't1']) {
      this.#txns.push({
        transactionalId: id,
        producerId: -1n,
        producerEpoch: -1,
        phase: 'none',
        offsetsAdded: false,
        inFlight: false,
        pendingOffsets: [],
      })
    }
  }

  #count(name: string): void {
    this.stats[name] = (this.stats[name] ?? 0) + 1
  }

  get #now(): number {
    return this.world.clock.now()
  }

  async boot(): Promise<void> {
    await this.world.start()
  }

  /** Sends a request; `onAnswer` sees its answer only if the incarnation that got it still runs. */
  #send<T>(what: string, call: () => T | Promise<T>, onAnswer: (v: T) => void, onClose: () => void): void {
    const inc = this.world.current
    if (inc === undefined) {
      onClose()
      return
    }
    const id = this.#nextRequest++
    this.#pending.set(id, { id, what, sentMs: this.#now, incarnation: inc.id })
    this.#count(`req:${what}`)
    const settle = (v: T | undefined, err: unknown) => {
      if (!this.#pending.has(id)) return
      this.#pending.delete(id)
      if (this.world.current?.id !== inc.id) return
      if (err !== undefined) {
        // A service call must answer, never reject: a rejection is a server error escaping.
        this.#failure = new Violation('request-rejected', `${what} rejected: ${String(err)}`)
        onClose()
        return
      }
      onAnswer(v as T)
    }
    try {
      const r = call()
      if (r instanceof Promise)
        r.then(
          (v) => settle(v, undefined),
          (e: unknown) => settle(undefined, e ?? 'undefined'),
        )
      else settle(r, undefined)
    } catch (e) {
      settle(undefined, e ?? 'undefined')
    }
    const closers = this.#closers
    closers.set(id, onClose)
  }

  readonly #closers = new Map<number, () => void>()
  #failure: Violation | undefined

  // ---- clients ----

  #streamsRequest(c: StreamsClient): StreamsGroupHeartbeatRequest {
    const owned = [...c.tasks].map(([subtopologyId, partitions]) => ({ subtopologyId, partitions }))
    const full = c.memberEpoch === 0 || c.full
    return {
      groupId: c.groupId,
      memberId: c.memberId,
      memberEpoch: c.memberEpoch,
      endpointInformationEpoch: -1,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: full ? 10_000 : -1,
      topology: full
        ? {
            epoch: c.topologyEpoch,
            subtopologies: [
              {
                subtopologyId: '0',
                sourceTopics: [c.source],
                sourceTopicRegex: [],
                stateChangelogTopics: [],
                repartitionSinkTopics: [],
                repartitionSourceTopics: [],
                copartitionGroups: [],
              },
            ],
          }
        : null,
      activeTasks: full && c.memberEpoch === 0 ? [] : owned,
      standbyTasks: full && c.memberEpoch === 0 ? [] : [],
      warmupTasks: full && c.memberEpoch === 0 ? [] : [],
      processId: full ? c.processId : null,
      userEndpoint: null,
      clientTags: null,
      taskOffsets: null,
      taskEndOffsets: null,
      shutdownApplication: false,
    }
  }

  #streamsHeartbeat(c: StreamsClient, leave = false): void {
    const inc = this.world.current
    if (inc === undefined || c.inFlight) return
    c.inFlight = true
    c.lastHbMs = this.#now
    const req = this.#streamsRequest(c)
    if (leave) {
      req.memberEpoch = -1
      req.topology = null
    }
    this.#send(
      leave ? 'streams-leave' : 'streams-heartbeat',
      () => inc.group.streamsGroupHeartbeat({ apiVersion: 1, clientId: c.memberId, clientHost: '/sim' }, req),
      (r) => {
        c.inFlight = false
        if (leave) return
        if (r.errorCode === ErrorCode.NONE) {
          c.memberEpoch = r.memberEpoch
          c.full = false
          if (r.activeTasks !== null)
            c.tasks = new Map(r.activeTasks.map((t) => [t.subtopologyId, [...t.partitions]]))
          if (r.topologyDescriptionRequired) c.wantsPush = true
        } else if (
          r.errorCode === ErrorCode.FENCED_MEMBER_EPOCH ||
          r.errorCode === ErrorCode.UNKNOWN_MEMBER_ID
        ) {
          c.memberEpoch = 0
          c.tasks = new Map()
        } else if (r.errorCode === ErrorCode.STREAMS_TOPOLOGY_FENCED) {
          // The group runs a newer topology: this member upgrades and rejoins with it.
          c.topologyEpoch++
          c.full = true
        } else if (
          r.errorCode === ErrorCode.INVALID_REQUEST ||
          r.errorCode === ErrorCode.GROUP_ID_NOT_FOUND
        ) {
          // The group id is another type's now (a classic conversion): this member is done.
          c.live = false
        }
        this.#count(`streams-hb:${r.errorCode}`)
      },
      () => {
        c.inFlight = false
      },
    )
  }

  #consumerHeartbeat(c: ConsumerClient, leave = false): void {
    const inc = this.world.current
    if (inc === undefined || c.inFlight) return
    c.inFlight = true
    c.lastHbMs = this.#now
    const joining = c.memberEpoch === 0
    this.#send(
      leave ? 'consumer-leave' : 'consumer-heartbeat',
      () =>
        inc.group.consumerGroupHeartbeat(
          { apiVersion: 1, clientId: c.memberId, clientHost: '/sim' },
          {
            groupId: c.groupId,
            memberId: c.memberId,
            memberEpoch: leave ? -1 : c.memberEpoch,
            instanceId: null,
            rackId: null,
            rebalanceTimeoutMs: joining ? 10_000 : -1,
            subscribedTopicNames: joining ? ['in-a', 'in-b'] : null,
            subscribedTopicRegex: null,
            serverAssignor: null,
            topicPartitions: joining
              ? []
              : [...c.partitions].map(([topicId, partitions]) => ({ topicId, partitions })),
          },
        ),
      (r) => {
        c.inFlight = false
        if (leave) return
        if (r.errorCode === ErrorCode.NONE) {
          c.memberEpoch = r.memberEpoch
          if (r.assignment !== null)
            c.partitions = new Map(r.assignment.topicPartitions.map((t) => [t.topicId, [...t.partitions]]))
        } else if (
          r.errorCode === ErrorCode.FENCED_MEMBER_EPOCH ||
          r.errorCode === ErrorCode.UNKNOWN_MEMBER_ID
        ) {
          c.memberEpoch = 0
          c.partitions = new Map()
        } else if (
          r.errorCode === ErrorCode.GROUP_ID_NOT_FOUND ||
          r.errorCode === ErrorCode.INVALID_REQUEST
        ) {
          c.live = false
        }
        this.#count(`consumer-hb:${r.errorCode}`)
      },
      () => {
        c.inFlight = false
      },
    )
  }

  /** Every live client whose heartbeat interval has passed heartbeats (as real clients do). */
  #autoHeartbeats(): void {
    for (const c of this.#clients) {
      if (!c.live || c.inFlight || this.#now - c.lastHbMs < HEARTBEAT_MS) continue
      if (c.kind === 'streams') this.#streamsHeartbeat(c)
      else this.#consumerHeartbeat(c)
    }
  }

  #live<K extends Client['kind']>(kind: K): Extract<Client, { kind: K }>[] {
    return this.#clients.filter((c) => c.kind === kind && c.live) as Extract<Client, { kind: K }>[]
  }

  // ---- steps ----

  async step(s: Step): Promise<void> {
    if (TRACE) console.log(`[${this.#now}] step ${formatStep(s)}`)
    const w = this.world
    const inc = w.current
    let dt = 50 + (s.b % 700)
    switch (s.op) {
      case 'sjoin': {
        const n = this.#nextClient++
        const c: StreamsClient = {
          kind: 'streams',
          groupId: STREAMS_GROUPS[s.a % STREAMS_GROUPS.length],
          memberId: `sm${n}`,
          processId: `p${n}`,
          source: 'in-a',
          topologyEpoch: 0,
          memberEpoch: 0,
          tasks: new Map(),
          live: true,
          inFlight: false,
          lastHbMs: this.#now,
          wantsPush: false,
          full: true,
        }
        // Members of one group agree on the topology: a newcomer takes the group's latest.
        for (const o of this.#live('streams')) {
          if (o.groupId === c.groupId) c.topologyEpoch = Math.max(c.topologyEpoch, o.topologyEpoch)
        }
        this.#clients.push(c)
        this.#streamsHeartbeat(c)
        break
      }
      case 'sleave':
      case 'svanish': {
        const live = this.#live('streams')
        if (live.length === 0) break
        const c = live[s.a % live.length]
        c.live = false
        if (s.op === 'sleave') {
          c.inFlight = false
          this.#streamsHeartbeat(c, true)
        }
        break
      }
      case 'sbump': {
        const live = this.#live('streams')
        if (live.length === 0) break
        const g = live[s.a % live.length].groupId
        for (const c of live) {
          if (c.groupId !== g) continue
          c.topologyEpoch++
          c.full = true
        }
        break
      }
      case 'push': {
        const live = this.#live('streams').filter((c) => c.memberEpoch > 0)
        if (live.length === 0 || inc === undefined) break
        const wanting = live.filter((c) => c.wantsPush)
        const c = (wanting.length > 0 ? wanting : live)[
          s.a % (wanting.length > 0 ? wanting.length : live.length)
        ]
        c.wantsPush = false
        this.#send(
          'push',
          () =>
            inc.group.streamsGroupTopologyDescriptionUpdate({
              groupId: c.groupId,
              memberId: c.memberId,
              topologyEpoch: c.topologyEpoch,
              topologyDescription: {
                subtopologies: [
                  {
                    subtopologyId: '0',
                    nodes: [
                      {
                        name: 'KSTREAM-SOURCE-0000000000',
                        nodeType: 1,
                        sourceTopics: [c.source],
                        sinkTopic: null,
                        stores: [],
                        successors: [],
                      },
                    ],
                  },
                ],
                globalStores: [],
              },
            }),
          (r) => this.#count(`push:${r.errorCode}`),
          () => {},
        )
        break
      }
      case 'describe': {
        if (inc === undefined) break
        const g = STREAMS_GROUPS[s.a % STREAMS_GROUPS.length]
        this.#send(
          'describe',
          () => inc.group.streamsGroupDescribe([g], true),
          () => {},
          () => {},
        )
        break
      }
      case 'delete': {
        if (inc === undefined) break
        const all = [...STREAMS_GROUPS, ...CONSUMER_GROUPS, 'simple', 'txg']
        const ids = [all[s.a % all.length]]
        if (s.b % 3 === 0) ids.push(all[(s.a + 1) % all.length])
        this.#send(
          'delete-groups',
          () => inc.group.deleteGroups(ids),
          (r) => {
            for (const row of r) this.#count(`delete:${row.errorCode}`)
          },
          () => {},
        )
        break
      }
      case 'cjoin': {
        const n = this.#nextClient++
        const c: ConsumerClient = {
          kind: 'consumer',
          groupId: CONSUMER_GROUPS[s.a % CONSUMER_GROUPS.length],
          memberId: `cm${n}`,
          memberEpoch: 0,
          partitions: new Map(),
          live: true,
          inFlight: false,
          lastHbMs: this.#now,
        }
        this.#clients.push(c)
        this.#consumerHeartbeat(c)
        break
      }
      case 'cleave':
      case 'cvanish': {
        const live = this.#live('consumer')
        if (live.length === 0) break
        const c = live[s.a % live.length]
        c.live = false
        if (s.op === 'cleave') {
          c.inFlight = false
          this.#consumerHeartbeat(c, true)
        }
        break
      }
      case 'commit': {
        if (inc === undefined) break
        const members = this.#clients.filter((c) => c.live && c.memberEpoch > 0)
        const m = s.b % 2 === 0 && members.length > 0 ? members[s.a % members.length] : undefined
        this.#send(
          'commit',
          () =>
            inc.group.commitOffsets(9, {
              groupId: m?.groupId ?? 'simple',
              generationIdOrMemberEpoch: m?.memberEpoch ?? -1,
              memberId: m?.memberId ?? '',
              groupInstanceId: null,
              retentionTimeMs: -1n,
              topics: [
                {
                  name: 'in-a',
                  topicId: TOPIC_IDS['in-a'],
                  partitions: [
                    {
                      partitionIndex: s.a % 4,
                      committedOffset: BigInt(s.b),
                      committedLeaderEpoch: -1,
                      committedMetadata: '',
                    },
                  ],
                },
              ],
            }),
          (r) => this.#count(`commit:${r[0]?.partitions[0]?.errorCode}`),
          () => {},
        )
        break
      }
      case 'classic': {
        if (inc === undefined) break
        const ids = [...STREAMS_GROUPS, ...CONSUMER_GROUPS]
        const g = ids[s.a % ids.length]
        this.#send(
          'classic-join',
          () =>
            inc.group.classicGroups.joinGroup(
              { apiVersion: 9, clientId: 'classic', clientHost: '/sim' },
              {
                groupId: g,
                sessionTimeoutMs: 6000,
                rebalanceTimeoutMs: 6000,
                memberId: '',
                groupInstanceId: null,
                protocolType: 'consumer',
                protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
                reason: null,
              },
            ),
          (r) => this.#count(`classic-join:${r.errorCode}`),
          () => {},
        )
        break
      }
      case 'plugin':
        w.plugin.mode = PLUGIN_MODES[s.a % PLUGIN_MODES.length]
        break
      case 'sfail':
        w.faults.failNext = 1 + (s.a % 3)
        break
      case 'sstall':
        w.faults.stallNext = 1 + (s.a % 2)
        break
      case 'srelease':
        this.#release(s.a % 2 === 0)
        break
      case 'tick':
        dt = 500 + s.a * 30
        break
      case 'restart':
        await this.#restart()
        break
      case 'tinit':
      case 'tbegin':
      case 'toffsets':
      case 'tend':
        this.#txnStep(s)
        break
    }
    await this.#run(dt)
  }

  #release(land: boolean): void {
    const stalled = this.world.faults.stalled.shift()
    if (stalled === undefined) return
    if (land) stalled.resolve()
    else stalled.reject(new Error('simulated store failure after a stall'))
  }

  #txnStep(s: Step): void {
    const inc = this.world.current
    const t = this.#txns[s.a % this.#txns.length]
    if (inc === undefined || t.inFlight) return
    const done = () => {
      t.inFlight = false
    }
    const fenced = (code: number) => {
      if (
        code === ErrorCode.PRODUCER_FENCED ||
        code === ErrorCode.INVALID_PRODUCER_EPOCH ||
        code === ErrorCode.INVALID_PRODUCER_ID_MAPPING
      ) {
        t.phase = 'none'
        this.#dropPending(t)
      }
    }
    switch (s.op) {
      case 'tinit':
        t.inFlight = true
        this.#send(
          'init-producer-id',
          () =>
            inc.txn.initProducerId({
              transactionalId: t.transactionalId,
              transactionTimeoutMs: 20_000,
              producerId: t.producerId,
              producerEpoch: t.producerEpoch,
            }),
          (r) => {
            done()
            this.#count(`init-pid:${r.errorCode}`)
            if (r.errorCode !== ErrorCode.NONE) return
            // A new epoch aborts whatever the producer had open.
            this.#dropPending(t)
            t.producerId = r.producerId
            t.producerEpoch = r.producerEpoch
            t.phase = 'idle'
            t.offsetsAdded = false
          },
          done,
        )
        break
      case 'tbegin':
        if (t.phase === 'none') return
        t.inFlight = true
        this.#send(
          'add-partitions',
          () =>
            inc.txn.addPartitionsToTxn({
              transactionalId: t.transactionalId,
              producerId: t.producerId,
              producerEpoch: t.producerEpoch,
              topics: [
                { topic: 'in-a', partitions: [s.b % 4] },
                { topic: 'in-b', partitions: [s.b % 3] },
              ],
              clientTransactionVersion: 2,
            }),
          (code) => {
            done()
            this.#count(`add-partitions:${code}`)
            if (code === ErrorCode.NONE) t.phase = 'open'
            else fenced(code)
          },
          done,
        )
        break
      case 'toffsets': {
        if (t.phase !== 'open') return
        t.inFlight = true
        const commitOffsets = () => {
          const offset = this.#nextOffset++
          this.#send(
            'txn-offset-commit',
            () =>
              inc.group.commitTransactionalOffsets(4, {
                transactionalId: t.transactionalId,
                groupId: 'txg',
                producerId: t.producerId,
                producerEpoch: t.producerEpoch,
                generationIdOrMemberEpoch: -1,
                memberId: '',
                groupInstanceId: null,
                topics: [
                  {
                    name: 'in-a',
                    topicId: TOPIC_IDS['in-a'],
                    partitions: [
                      {
                        partitionIndex: 0,
                        committedOffset: offset,
                        committedLeaderEpoch: -1,
                        committedMetadata: '',
                      },
                    ],
                  },
                ],
              }),
            (r) => {
              done()
              const code = r[0]?.partitions[0]?.errorCode ?? -1
              this.#count(`txn-offset-commit:${code}`)
              if (code === ErrorCode.NONE) t.pendingOffsets.push(offset)
            },
            done,
          )
        }
        if (t.offsetsAdded) {
          commitOffsets()
          return
        }
        this.#send(
          'add-offsets',
          () =>
            inc.txn.addOffsetsToTxn({
              transactionalId: t.transactionalId,
              producerId: t.producerId,
              producerEpoch: t.producerEpoch,
              groupId: 'txg',
            }),
          (code) => {
            this.#count(`add-offsets:${code}`)
            if (code === ErrorCode.NONE) {
              t.offsetsAdded = true
              commitOffsets()
            } else {
              done()
              fenced(code)
            }
          },
          done,
        )
        break
      }
      case 'tend': {
        if (t.phase !== 'open') return
        const committed = s.b % 3 !== 0
        t.inFlight = true
        const pending = [...t.pendingOffsets]
        this.#send(
          'end-txn',
          () =>
            inc.txn.endTxn({
              transactionalId: t.transactionalId,
              producerId: t.producerId,
              producerEpoch: t.producerEpoch,
              committed,
              clientTransactionVersion: 2,
            }),
          (r) => {
            done()
            this.#count(`end-txn:${committed ? 'commit' : 'abort'}:${r.errorCode}`)
            if (r.errorCode === ErrorCode.NONE) {
              if (!committed) for (const o of pending) this.#abortedOffsets.add(o)
              t.pendingOffsets = []
              t.producerId = r.producerId
              t.producerEpoch = r.producerEpoch
              t.phase = 'idle'
              t.offsetsAdded = false
            } else fenced(r.errorCode)
          },
          done,
        )
        break
      }
    }
  }

  /**
   * Offsets of a transaction whose outcome the producer does not know (fenced, re-initialised):
   * the coordinator aborts it, so they must never become visible.
   */
  #dropPending(t: TxnClient): void {
    if (t.phase === 'open') for (const o of t.pendingOffsets) this.#abortedOffsets.add(o)
    t.pendingOffsets = []
  }

  async #restart(): Promise<void> {
    const w = this.world
    const before = this.#snapshot()
    // While an append is in flight, a shard may hold writes of its batch replayed ahead of the
    // append (the runtime's speculative batch replay), and the other shards' batches wait for the
    // same store write (group commit): nothing of them was answered, and the log is what must
    // survive. So the shards of a runtime are compared only when none of its appends is in flight.
    const store = w.current?.store
    const txnFirst = transactionLogsStart(TXN_SHARDS)
    let groupBusy = false
    let txnBusy = false
    for (const [log, n] of store?.inFlight ?? []) {
      if (n === 0) continue
      if (log >= txnFirst) txnBusy = true
      else groupBusy = true
    }
    for (const key of [...before.keys()]) {
      if ((key.startsWith('group-') && groupBusy) || (key.startsWith('txn-') && txnBusy)) before.delete(key)
    }
    this.#count(before.size === NUM_SHARDS + TXN_SHARDS ? 'restart:compared-all' : 'restart:in-flight')
    w.kill()
    for (const [id, close] of this.#closers) {
      if (this.#pending.has(id)) close()
    }
    this.#pending.clear()
    this.#closers.clear()
    for (const c of this.#clients) c.inFlight = false
    for (const t of this.#txns) t.inFlight = false
    // The faults belong to the old process's disk session.
    w.faults.failNext = 0
    w.faults.stallNext = 0
    this.#stalledSince = undefined
    // Each shard as loading rebuilt it, before its on-loaded operation (which may move on: arm
    // timers, complete a transaction left prepared).
    const replayed = new Map<string, string>()
    w.onReplayed = (key, state) => replayed.set(key, state)
    await w.start()
    w.onReplayed = undefined
    this.#count('restart')
    for (const [key, a] of before) {
      const b = replayed.get(key)
      if (b === undefined) throw new Violation('replay-equivalence', `${key} was not reloaded`)
      if (a !== b) throw new Violation('replay-equivalence', `${key}: ${firstDifference(a, b)}`)
    }
  }

  /** Advances time in heartbeat-sized slices, clients heartbeating, checking after each slice. */
  async #run(ms: number): Promise<void> {
    const end = this.#now + ms
    while (this.#now < end) {
      this.#autoHeartbeats()
      this.#releaseOldStalls()
      await this.world.advance(Math.min(HEARTBEAT_MS / 2, end - this.#now))
      this.#check()
    }
  }

  #releaseOldStalls(): void {
    const faults = this.world.faults
    if (faults.stalled.length === 0) {
      this.#stalledSince = undefined
      return
    }
    this.#stalledSince ??= this.#now
    if (this.#now - this.#stalledSince >= STALL_MAX_MS) {
      this.#release(true)
      this.#stalledSince = undefined
    }
  }

  /** The end of a run: faults cleared, time passes, every request must have been answered. */
  async quiesce(): Promise<void> {
    const w = this.world
    w.plugin.mode = 'ok'
    w.faults.failNext = 0
    w.faults.stallNext = 0
    while (w.faults.stalled.length > 0) this.#release(true)
    await this.#run(ANSWER_WITHIN_MS + 10_000)
    if (this.#pending.size > 0) {
      const p = [...this.#pending.values()][0]
      throw new Violation('unanswered', `${p.what} sent at ${p.sentMs} never answered (now ${this.#now})`)
    }
  }

  // ---- invariants ----

  #check(): void {
    if (this.#failure !== undefined) throw this.#failure
    const shards = this.world.shards()
    this.#checkKip1331(shards)
    this.#checkOwnership(shards)
    if (TRACE) {
      for (const shard of shards)
        for (const id of shard.streams.groupIds()) {
          const g = shard.streams.group(id)!
          const ms = [...g.members.values()].map((m) => `${m.memberId}@${m.memberEpoch}`).join(',')
          console.log(
            `[${this.#now}]   ${id} epoch ${g.groupEpoch} stored ${g.storedDescriptionTopologyEpoch} members ${ms}`,
          )
        }
    }
    this.#checkTransactions(shards)
    for (const p of this.#pending.values()) {
      if (this.#now - p.sentMs > ANSWER_WITHIN_MS) {
        throw new Violation('unanswered', `${p.what} sent at ${p.sentMs} not answered by ${this.#now}`)
      }
    }
  }

  /** KIP-1331: no leak (the plugin holds nothing nobody will reclaim) and no loss. */
  #checkKip1331(shards: GroupCoordinatorShard[]): void {
    const stored = new Map<string, number>()
    for (const shard of shards) {
      for (const id of shard.streams.groupIds()) {
        const g = shard.streams.group(id)
        if (g !== undefined) stored.set(id, g.storedDescriptionTopologyEpoch)
      }
    }
    for (const [groupId, epoch] of this.world.plugin.held) {
      const s = stored.get(groupId)
      if (s === undefined) throw new Violation('kip1331-leak', `${groupId}@${epoch}: the group is gone`)
      if (s === -1) throw new Violation('kip1331-leak', `${groupId}@${epoch}: the coordinator records -1`)
    }
    for (const [groupId, s] of stored) {
      if (s < 0) continue
      const held = this.world.plugin.held.get(groupId)
      if (held !== s)
        throw new Violation('kip1331-loss', `${groupId}@${s}: the plugin holds ${held ?? 'nothing'}`)
    }
  }

  /** No task or partition is owned by two members of one group at once (server and clients). */
  #checkOwnership(shards: GroupCoordinatorShard[]): void {
    for (const shard of shards) {
      const found = doubleOwners(shard)
      if (found.length > 0) throw new Violation('double-owner', found[0])
    }
    // What the clients believe: members the coordinator knows at the client's epoch never overlap.
    const serverEpoch = (c: Client): number | undefined => {
      for (const shard of shards) {
        const g = c.kind === 'streams' ? shard.streams.group(c.groupId) : shard.consumer.group(c.groupId)
        const m = g?.members.get(c.memberId)
        if (m !== undefined) return m.memberEpoch
      }
      return undefined
    }
    const believed = new Map<string, string>()
    for (const c of this.#clients) {
      if (!c.live || c.memberEpoch <= 0 || serverEpoch(c) !== c.memberEpoch) continue
      const owned = c.kind === 'streams' ? c.tasks : c.partitions
      for (const [k, parts] of owned) {
        for (const p of parts) {
          const key = `${c.groupId}/${k}-${p}`
          const o = believed.get(key)
          if (o !== undefined)
            throw new Violation('double-owner', `clients ${o} and ${c.memberId} both own ${key}`)
          believed.set(key, c.memberId)
        }
      }
    }
  }

  /**
   * Group and member epochs never go back while the group exists: checked on the log itself, as
   * each batch becomes durable (a group deleted and created again between two checks of memory
   * would look like an epoch going back; its tombstone in the log says it was deleted).
   */
  #onLanded(shard: number, records: readonly CoordinatorRecord[]): void {
    if (shard >= NUM_SHARDS) return
    for (const stored of records) {
      const r = coordinatorRecordSerde.deserialize(stored)
      if (r === undefined) continue
      let type: string | undefined
      let groupId: string | undefined
      let memberId: string | undefined
      let epoch: number | undefined
      switch (r.type) {
        case 'StreamsGroupMetadata':
        case 'ConsumerGroupMetadata':
          type = r.type
          groupId = r.key.groupId
          epoch = r.value?.epoch
          break
        case 'StreamsGroupCurrentMemberAssignment':
        case 'ConsumerGroupCurrentMemberAssignment':
          type = r.type
          groupId = r.key.groupId
          memberId = r.key.memberId
          epoch = r.value?.memberEpoch
          break
        default:
          continue
      }
      const key = `${shard}/${type}/${groupId}/${memberId ?? ''}`
      if (epoch === undefined) {
        this.#epochs.delete(key)
        continue
      }
      const before = this.#epochs.get(key)
      if (before !== undefined && epoch < before && this.#failure === undefined) {
        this.#failure = new Violation(
          'epoch-back',
          `${type} ${groupId} ${memberId ?? ''}: ${before} → ${epoch}`,
        )
      }
      this.#epochs.set(key, epoch)
    }
  }

  /** All-or-nothing markers; an aborted transaction's offsets are never committed. */
  #checkTransactions(shards: GroupCoordinatorShard[]): void {
    const outcome = new Map<string, string>()
    for (const [partition, markers] of this.world.data.markers) {
      for (const m of markers) {
        const [pid, epoch, result] = m.split(':')
        const k = `${pid}:${epoch}`
        const o = outcome.get(k)
        if (o !== undefined && o !== result)
          throw new Violation('txn-half', `producer ${k}: ${o} on one partition, ${result} on ${partition}`)
        outcome.set(k, result)
      }
    }
    for (const shard of shards) {
      const r = shard.fetchOffsets({ groupId: 'txg', memberId: null, memberEpoch: -1, topics: null })
      for (const t of r.topics) {
        for (const p of t.partitions) {
          if (this.#abortedOffsets.has(p.committedOffset))
            throw new Violation(
              'txn-aborted-offset',
              `offset ${p.committedOffset} of an aborted transaction is committed`,
            )
        }
      }
    }
  }

  /** The replayed state of every shard (soft state left out), for replay equivalence. */
  #snapshot(): Map<string, string> {
    const out = new Map<string, string>()
    const inc = this.world.current
    if (inc === undefined) return out
    // A shard whose memory is ahead of its log (a batch of writes in flight, replayed before it is
    // durable and answered only once it is) is not compared: the restart loads the log without the
    // batch, and none of its writes was answered.
    for (let i = 0; i < NUM_SHARDS; i++) {
      const shard = inc.group.peekShard(i)
      if (shard !== undefined && !inc.group.hasUnwrittenRecords(i))
        out.set(`group-${i}`, groupSnapshot(shard))
    }
    for (let i = 0; i < TXN_SHARDS; i++) {
      const shard = inc.txn.peekShard(i)
      if (shard !== undefined && !inc.txn.hasUnwrittenRecords(i)) out.set(`txn-${i}`, txnSnapshot(shard))
    }
    return out
  }
}

function firstDifference(a: string, b: string): string {
  let i = 0
  while (i < a.length && a[i] === b[i]) i++
  const from = Math.max(0, i - 200)
  return `before: …${a.slice(from, i + 200)}… after: …${b.slice(from, i + 200)}…`
}

export { NUM_SHARDS }
