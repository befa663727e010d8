/**
 * The deterministic simulation's world: the REAL group coordinator service (runtime, shards,
 * classic, consumer and streams groups, the topology-description manager) and the REAL transaction
 * coordinator service, on one simulated clock, over a record store that fails or stalls appends on
 * command, with a topology-description plugin whose every call succeeds, fails (transiently or
 * permanently), throws, hangs or answers late as the steps say. Nothing reads the real clock:
 * time moves only when the simulation advances it, timers fire in due order, and every promise
 * chain settles before the next timer (the coordinator does no I/O of its own here).
 *
 * A restart drops the running services as a kill -9 would (their timers never fire again, their
 * stalled appends never land, their requests are never answered: the clients see the connection
 * close) and starts new ones that replay the same store; the plugin's backend and the clients
 * survive it.
 */
import { ManualClock, type RuntimeClock, type TimerHandle } from '../../src/coordinator/runtime/clock.js'
import { GroupCoordinatorService } from '../../src/coordinator/service/group-coordinator-service.js'
import type { CoordinatorNewTopic, CoordinatorTopic } from '../../src/coordinator/service/topics-image.js'
import {
  PrefetchingProducerIds,
  TransactionCoordinatorService,
  type TransactionMarkerWriter,
} from '../../src/coordinator/service/transaction-coordinator-service.js'
import type { GroupCoordinatorShard } from '../../src/coordinator/shard/group-coordinator-shard.js'
import { coordinatorRecordSerde } from '../../src/coordinator/service/records.js'
import { MemoryRecordStore } from '../../src/coordinator/storage/memory.js'
import type { CoordinatorRecord, LoadOptions, RecordStore } from '../../src/coordinator/storage/types.js'
import type { MarkerPartitionResult, TxnMarkerIntent } from '../../src/coordinator/txn/index.js'
import { guardPlugin } from '../../src/plugin/guard.js'
import {
  type StreamsGroupTopologyDescription,
  type StreamsGroupTopologyDescriptionPlugin,
  StreamsTopologyDescriptionPermanentFailureException,
  StreamsTopologyDescriptionTransientFailureException,
} from '../../src/plugin/spi.js'
import { parseConfig } from '../../src/server/config.js'
import { groupSnapshot, txnSnapshot } from './snapshot.js'

/** Deterministic draws (splitmix32): the one source of randomness of a run. */
export class Rng {
  #s: number
  constructor(seed: number) {
    this.#s = seed >>> 0
  }
  next(): number {
    this.#s = (this.#s + 0x9e3779b9) >>> 0
    let z = this.#s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296
  }
  int(n: number): number {
    return Math.floor(this.next() * n)
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]
  }
}

/**
 * One incarnation's view of the world clock: its timers stop firing once it is killed, as a dead
 * process's would. Time itself is shared and never goes back.
 */
class IncarnationClock implements RuntimeClock {
  readonly #world: ManualClock
  dead = false
  constructor(world: ManualClock) {
    this.#world = world
  }
  now(): number {
    return this.#world.now()
  }
  setTimer(callback: () => void, delayMs: number): TimerHandle {
    return this.#world.setTimer(
      () => {
        if (!this.dead) callback()
      },
      Math.max(0, delayMs),
    )
  }
  clearTimer(handle: TimerHandle): void {
    this.#world.clearTimer(handle)
  }
}

interface Stalled {
  readonly shard: number
  readonly records: readonly CoordinatorRecord[]
  readonly resolve: () => void
  readonly reject: (e: unknown) => void
}

/** What the store does with the next appends (set by the steps). */
export class StoreFaults {
  failNext = 0
  stallNext = 0
  /** Appends waiting for a `release` step, oldest first. */
  stalled: Stalled[] = []
  /** Told of every batch that became durable, in log order. */
  onLanded: ((shard: number, records: readonly CoordinatorRecord[]) => void) | undefined
}

/**
 * An incarnation's record store over the durable memory store: appends fail or stall as the faults
 * say; once the incarnation is dead nothing it appends lands and its stalled appends are dropped.
 */
class SimStore implements RecordStore {
  /** Appends started and not settled, by store log. */
  readonly inFlight = new Map<number, number>()
  readonly #durable: MemoryRecordStore
  readonly #faults: StoreFaults
  dead = false
  constructor(durable: MemoryRecordStore, faults: StoreFaults) {
    this.#durable = durable
    this.#faults = faults
  }
  async open(): Promise<void> {}
  append(shard: number, records: readonly CoordinatorRecord[]): Promise<void> {
    if (this.dead) return new Promise(() => {})
    this.inFlight.set(shard, (this.inFlight.get(shard) ?? 0) + 1)
    const done = () => {
      this.inFlight.set(shard, (this.inFlight.get(shard) ?? 1) - 1)
    }
    return this.#append(shard, records).then(
      () => done(),
      (e: unknown) => {
        done()
        throw e
      },
    )
  }

  #append(shard: number, records: readonly CoordinatorRecord[]): Promise<void> {
    if (process.env.SIM_TRACE === '1') {
      const decoded = records.map((r) => {
        const d = coordinatorRecordSerde.deserialize(r) as { type?: string; value?: unknown } | undefined
        return `${d?.type}${d?.value === null ? '(tombstone)' : ''}${d?.type === 'StreamsGroupMetadata' ? JSON.stringify(d.value, (_k, v) => (typeof v === 'bigint' ? String(v) : v)) : ''}`
      })
      console.log(
        `  append shard ${shard} fail=${this.#faults.failNext} stall=${this.#faults.stallNext}: ${decoded.join(' ')}`,
      )
    }
    if (this.#faults.failNext > 0) {
      this.#faults.failNext--
      return Promise.reject(new Error('simulated store failure'))
    }
    if (this.#faults.stallNext > 0) {
      this.#faults.stallNext--
      return new Promise((resolve, reject) => {
        this.#faults.stalled.push({
          shard,
          records,
          resolve: () => {
            if (this.dead) return
            this.#durable.append(shard, records).then(() => {
              this.#faults.onLanded?.(shard, records)
              resolve()
            }, reject)
          },
          reject: (e) => {
            if (!this.dead) reject(e)
          },
        })
      })
    }
    return this.#durable.append(shard, records).then(() => this.#faults.onLanded?.(shard, records))
  }
  load(shard: number, options?: LoadOptions): Promise<CoordinatorRecord[]> {
    return this.#durable.load(shard, options)
  }
  compact(shard: number): Promise<void> {
    return this.#durable.compact(shard)
  }
  async close(): Promise<void> {}
}

export type PluginMode = 'ok' | 'transient' | 'permanent' | 'throw' | 'hang' | 'late'
export const PLUGIN_MODES: readonly PluginMode[] = ['ok', 'transient', 'permanent', 'throw', 'hang', 'late']

/** How late a 'late' plugin answers: past the guard's deadline. */
export const PLUGIN_LATE_MS = 7_000
/** The guard's deadline per plugin call (group.streams.topology.description.plugin.timeout.ms). */
export const PLUGIN_TIMEOUT_MS = 5_000

/**
 * The plugin's backend: one description per group, kept across restarts. A call takes effect when
 * the backend receives it (a hung call never reaches it; a late one has taken effect and only its
 * answer is late), so what the backend holds is exactly what the calls that reached it did.
 */
export class SimPluginBackend {
  readonly held = new Map<string, number>()
  mode: PluginMode = 'ok'
  calls = 0
  /** A broken backend that acknowledges deletes without deleting (to test the checks). */
  dropDeletes = false
}

class SimPlugin implements StreamsGroupTopologyDescriptionPlugin {
  readonly #backend: SimPluginBackend
  readonly #clock: RuntimeClock
  constructor(backend: SimPluginBackend, clock: RuntimeClock) {
    this.#backend = backend
    this.#clock = clock
  }
  configure(): void {}
  #call<T>(effect: () => T): Promise<T> {
    const b = this.#backend
    b.calls++
    switch (b.mode) {
      case 'ok':
        return Promise.resolve(effect())
      case 'transient':
        return Promise.reject(new StreamsTopologyDescriptionTransientFailureException('backend down'))
      case 'permanent':
        return Promise.reject(new StreamsTopologyDescriptionPermanentFailureException('rejected for good'))
      case 'throw':
        throw new Error('plugin threw')
      case 'hang':
        return new Promise(() => {})
      case 'late': {
        const value = effect()
        return new Promise((resolve) => this.#clock.setTimer(() => resolve(value), PLUGIN_LATE_MS))
      }
    }
  }
  setTopology(groupId: string, topologyEpoch: number, _d: StreamsGroupTopologyDescription): Promise<void> {
    return this.#call(() => {
      this.#backend.held.set(groupId, topologyEpoch)
    })
  }
  getTopology(groupId: string, topologyEpoch: number): Promise<StreamsGroupTopologyDescription | null> {
    return this.#call(() =>
      this.#backend.held.get(groupId) === topologyEpoch ? { subtopologies: [], globalStores: [] } : null,
    )
  }
  deleteTopology(groupId: string): Promise<void> {
    return this.#call(() => {
      if (!this.#backend.dropDeletes) this.#backend.held.delete(groupId)
    })
  }
  async close(): Promise<void> {}
}

/** The topic catalog: two source topics, internal topics created on request. */
class SimTopics {
  readonly topics = new Map<string, CoordinatorTopic>()
  constructor() {
    this.topics.set('in-a', { name: 'in-a', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', numPartitions: 4 })
    this.topics.set('in-b', { name: 'in-b', topicId: 'AAAAAAAAAAAAAAAAAAAAAg', numPartitions: 3 })
  }
  list(): CoordinatorTopic[] {
    return [...this.topics.values()]
  }
  async createTopics(topics: readonly CoordinatorNewTopic[]) {
    return topics.map((t) => {
      if (!this.topics.has(t.name)) {
        const n = this.topics.size + 1
        const topicId = Buffer.alloc(16, n).toString('base64url')
        this.topics.set(t.name, { name: t.name, topicId, numPartitions: t.numPartitions })
      }
      return { name: t.name, error: 'NONE', message: null }
    })
  }
}

/** Data partitions as the transaction markers see them: every marker written, in order. */
export class SimDataPlane implements TransactionMarkerWriter {
  /** "topic-partition" → markers written there ("pid:epoch:commit|abort"). */
  readonly markers = new Map<string, string[]>()
  group: GroupCoordinatorService | undefined
  async writeTxnMarkers(
    marker: TxnMarkerIntent,
    topics: readonly { readonly topic: string; readonly partitions: readonly number[] }[],
  ): Promise<readonly MarkerPartitionResult[]> {
    const out: MarkerPartitionResult[] = []
    for (const t of topics) {
      for (const p of t.partitions) {
        if (t.topic === '__consumer_offsets') {
          const g = this.group
          const errorCode = g === undefined ? 15 : await g.completeTransaction(p, marker)
          out.push({ topic: t.topic, partition: p, errorCode })
          continue
        }
        const key = `${t.topic}-${p}`
        const list = this.markers.get(key) ?? []
        list.push(`${marker.producerId}:${marker.producerEpoch}:${marker.committed ? 'commit' : 'abort'}`)
        this.markers.set(key, list)
        out.push({ topic: t.topic, partition: p, errorCode: 0 })
      }
    }
    return out
  }
  partitionExists(topic: string, partition: number): boolean {
    return (
      (topic === 'in-a' && partition < 4) ||
      (topic === 'in-b' && partition < 3) ||
      topic === '__consumer_offsets'
    )
  }
}

export const NUM_SHARDS = 2
export const TXN_SHARDS = 2

const CONFIG = {
  'offsets.topic.num.partitions': String(NUM_SHARDS),
  'transaction.state.log.num.partitions': String(TXN_SHARDS),
  'group.streams.initial.rebalance.delay.ms': '0',
  'group.streams.assignment.interval.ms': '0',
  'group.streams.session.timeout.ms': '6000',
  'group.streams.min.session.timeout.ms': '6000',
  'group.streams.heartbeat.interval.ms': '1000',
  'group.streams.min.heartbeat.interval.ms': '1000',
  'group.consumer.session.timeout.ms': '6000',
  'group.consumer.min.session.timeout.ms': '6000',
  'group.consumer.heartbeat.interval.ms': '1000',
  'group.consumer.min.heartbeat.interval.ms': '1000',
  'group.initial.rebalance.delay.ms': '0',
  'group.min.session.timeout.ms': '1000',
  'offsets.retention.minutes': '1',
  'offsets.retention.check.interval.ms': '20000',
  'offsets.commit.timeout.ms': '5000',
}

/** One running coordinator: both services over one incarnation's clock and store. */
export interface Incarnation {
  readonly id: number
  readonly clock: IncarnationClock
  readonly store: SimStore
  readonly group: GroupCoordinatorService
  readonly txn: TransactionCoordinatorService
}

export class World {
  readonly clock = new ManualClock(1_000_000)
  readonly durable = new MemoryRecordStore()
  readonly faults = new StoreFaults()
  readonly plugin = new SimPluginBackend()
  readonly topics = new SimTopics()
  readonly data = new SimDataPlane()
  readonly rng: Rng
  #uuid = 0
  #producerIds = 1000n
  #incarnations = 0
  current: Incarnation | undefined
  /** Told of each shard's state as loading rebuilt it (see CoordinatorRuntimeOptions.onShardReplayed). */
  onReplayed: ((key: string, state: string) => void) | undefined

  constructor(seed: number) {
    this.rng = new Rng(seed ^ 0x5eed)
  }

  /** Starts an incarnation over the durable store (loading is replaying it). */
  async start(): Promise<Incarnation> {
    await this.durable.open()
    const clock = new IncarnationClock(this.clock)
    const store = new SimStore(this.durable, this.faults)
    const config = parseConfig(CONFIG)
    const id = ++this.#incarnations
    const guarded = guardPlugin(new SimPlugin(this.plugin, clock), {
      timeoutMs: PLUGIN_TIMEOUT_MS,
      timers: clock,
    })
    // Ids as a seeded run draws them; a restart does not reuse earlier ones.
    const newUuid = () => `u${id}-${++this.#uuid}`
    const groupP = GroupCoordinatorService.start({
      store,
      config,
      topics: this.topics,
      clock,
      random: () => this.rng.next(),
      topologyDescriptionPlugin: guarded,
      newUuid,
      onShardReplayed: (i, shard) => this.onReplayed?.(`group-${i}`, groupSnapshot(shard)),
    })
    const producerIds = new PrefetchingProducerIds(async () => this.#producerIds++, { prefetch: 4 })
    const txnP = (async () => {
      await producerIds.fill()
      return TransactionCoordinatorService.start({
        store,
        config: { transactionStateLogNumPartitions: TXN_SHARDS, offsetsTopicNumPartitions: NUM_SHARDS },
        onShardReplayed: (i, shard) => this.onReplayed?.(`txn-${i}`, txnSnapshot(shard)),
        producerIds,
        markers: this.data,
        clock,
        writeTimeoutMs: 5000,
        markerRetryBackoffMs: 100,
      })
    })()
    // Loading may wait on stalled appends (the on-loaded writes): the steps release them.
    const [group, txn] = await this.#settle(Promise.all([groupP, txnP]))
    this.data.group = group
    this.current = { id, clock, store, group, txn }
    return this.current
  }

  /** Waits for a promise, letting time pass and stalls resolve if it needs them. */
  async #settle<T>(p: Promise<T>): Promise<T> {
    let done = false
    let value: T | undefined
    let error: unknown
    let failed = false
    p.then(
      (v) => {
        done = true
        value = v
      },
      (e) => {
        done = true
        failed = true
        error = e
      },
    )
    for (let i = 0; i < 1000 && !done; i++) {
      await drain()
      if (done) break
      const s = this.faults.stalled.shift()
      if (s !== undefined) s.resolve()
      else
        this.clock.advance(Math.max(0, (this.clock.nextDueMs() ?? this.clock.now() + 100) - this.clock.now()))
    }
    if (!done) throw new Error('an incarnation did not start')
    if (failed) throw error
    return value as T
  }

  /** Kills the current incarnation (kill -9): nothing of it runs, lands or answers again. */
  kill(): void {
    const c = this.current
    if (c === undefined) return
    c.clock.dead = true
    c.store.dead = true
    // Stalled appends of the dead process never reach the disk.
    this.faults.stalled = []
    this.current = undefined
  }

  /** Moves time forward by `ms`, one due timer at a time, settling every promise chain in between. */
  async advance(ms: number): Promise<void> {
    await drain()
    const end = this.clock.now() + ms
    for (;;) {
      const due = this.clock.nextDueMs()
      if (due === undefined || due > end) break
      this.clock.advance(Math.max(0, due - this.clock.now()))
      await drain()
    }
    this.clock.advance(end - this.clock.now())
    await drain()
  }

  /** The current incarnation's shards (replayed state, read outside their queues). */
  shards(): GroupCoordinatorShard[] {
    const c = this.current
    if (c === undefined) return []
    const out: GroupCoordinatorShard[] = []
    for (let i = 0; i < NUM_SHARDS; i++) {
      const s = c.group.peekShard(i)
      if (s !== undefined) out.push(s)
    }
    return out
  }
}

/**
 * Lets every pending promise chain run: the coordinator does no I/O here, so once the macrotask
 * queue comes round, every microtask chain that could run has run.
 */
export async function drain(): Promise<void> {
  // A few turns: the runtime starts a batch of writes from setImmediate, and an answer may queue
  // the next batch.
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve))
}
