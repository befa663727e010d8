/**
 * The data of `topograph demo`: a feeder that writes customers, orders, products and stock
 * movements into the sample applications' input topics, and one processing loop per streams member
 * that reads the partitions of its active tasks, writes what the topology writes (the repartition
 * topic, the joined orders, low-stock alerts, the stores' changelogs) and commits its offsets as a
 * member of its group, so that `kafka-streams-groups --describe --offsets` and the console show
 * real end offsets and lag. As Kafka Streams does, each member deletes the records of its
 * repartition topic partitions up to the offsets it has committed (`purgeIntervalMs`).
 *
 * The processing is a hand-written stand-in for what Kafka Streams would run for these topologies,
 * enough to move data; tables live in memory, shared by an application's members in this process.
 * Everything goes over the wire with Topograph's own clients.
 */
import {
  type Admin,
  KafkaError,
  OffsetSpec,
  type RecordsToDelete,
  UnsupportedVersionError,
} from '../clients/admin/index.js'
import type { Fetcher, TopicPartitionPosition } from '../clients/dataplane/fetcher.js'
import type { Producer, ProducerRecord } from '../clients/dataplane/producer.js'
import type { IncomingRecord } from '../clients/dataplane/records.js'
import type { StreamsMember } from '../clients/streams/member.js'
import { heartbeatTopology } from '../clients/streams/wire.js'
import type { Topology } from '../clients/streams/topology.js'

const enc = new TextEncoder()
const dec = new TextDecoder()
const text = (b: Uint8Array | null): string | null => (b === null ? null : dec.decode(b))
const bytes = (s: string): Uint8Array => enc.encode(s)

export const CUSTOMERS: ReadonlyArray<readonly [string, string]> = [
  ['c1', 'Ada'],
  ['c2', 'Grace'],
  ['c3', 'Linus'],
  ['c4', 'Margaret'],
  ['c5', 'Ken'],
  ['c6', 'Barbara'],
]
const ITEMS = ['keyboard', 'monitor', 'cable', 'lamp', 'chair', 'notebook']
const PRODUCTS: ReadonlyArray<readonly [string, string]> = [
  ['p1', 'keyboard'],
  ['p2', 'monitor'],
  ['p3', 'cable'],
  ['p4', 'lamp'],
]
const WAREHOUSES = ['berlin', 'lisbon']
/** stock below this raises an alert */
export const LOW_STOCK = 5

/** A stream of pseudo-random numbers from a seed (the demo's data is the same on every run). */
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

const log_ = (log: (line: string) => void, what: string, e: unknown): void =>
  log(`${what}: ${e instanceof KafkaError ? e.toString() : String(e)}`)

/** Whether an error says the cluster does not serve the data plane (Produce / Fetch). */
export const isUnsupported = (e: unknown): boolean => e instanceof UnsupportedVersionError

export interface Feeder {
  /** records written so far */
  readonly written: () => number
  stop(): Promise<void>
}

/**
 * Writes the reference data once (customers, products), then every `intervalMs` a few orders and
 * one stock movement per warehouse, each only when its topic is among `topics` (those of the
 * applications that run: a topic nobody created is never written, as its send would wait for it
 * until the delivery timeout). Stops on its own, with one log line, when the cluster does not
 * serve Produce.
 */
export function startFeeder(
  producer: Producer,
  log: (line: string) => void,
  opts: { readonly topics: ReadonlySet<string>; readonly intervalMs?: number },
): Feeder {
  const intervalMs = opts.intervalMs ?? 1000
  const random = rng(42)
  let written = 0
  let orderId = 0
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  const send = async (records: ProducerRecord[]): Promise<void> => {
    await producer.send(records)
    written += records.length
  }
  const tick = async (first: boolean): Promise<void> => {
    const records: ProducerRecord[] = []
    if (first) {
      for (const [id, name] of CUSTOMERS)
        records.push({ topic: 'customers', key: bytes(id), value: bytes(name) })
      for (const [sku, name] of PRODUCTS)
        records.push({ topic: 'products', key: bytes(sku), value: bytes(name) })
    }
    for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
      const customer = CUSTOMERS[Math.floor(random() * CUSTOMERS.length)]![0]
      const order = {
        customer,
        item: ITEMS[Math.floor(random() * ITEMS.length)]!,
        quantity: 1 + Math.floor(random() * 4),
      }
      records.push({ topic: 'orders', key: bytes(`o${++orderId}`), value: bytes(JSON.stringify(order)) })
    }
    for (const w of WAREHOUSES) {
      const sku = PRODUCTS[Math.floor(random() * PRODUCTS.length)]![0]
      const stock = { sku, quantity: Math.floor(random() * 20) }
      records.push({ topic: `inventory-${w}`, key: bytes(sku), value: bytes(JSON.stringify(stock)) })
    }
    // Drawn for every topic, written for the fed ones: the same data whichever applications run.
    const fed = records.filter((r) => opts.topics.has(r.topic))
    if (fed.length > 0) await send(fed)
  }
  const loop = (first: boolean): void => {
    running = tick(first).then(
      () => {
        if (!stopped) timer = setTimeout(() => loop(false), intervalMs)
      },
      (e: unknown) => {
        // stopping closes the producer under a send still waiting for its answer
        if (stopped) return
        if (isUnsupported(e)) {
          log('the cluster does not serve Produce: the demo applications run without data')
          return
        }
        log_(log, 'feeder', e)
        if (!stopped) timer = setTimeout(() => loop(first), intervalMs)
      },
    )
  }
  loop(true)
  return {
    written: () => written,
    stop: async () => {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}

/** What an application does with one record of one of its topics: the records it writes. */
export type RecordHandler = (topic: string, record: IncomingRecord) => ProducerRecord[]

/** The processing of the demo-orders application (see ordersApplication in demo.ts). */
export function ordersLogic(applicationId: string): RecordHandler {
  const repartition = `${applicationId}-orders-by-customer-repartition`
  const changelog = `${applicationId}-customers-store-changelog`
  const names = new Map<string, string>()
  return (topic, r) => {
    const key = text(r.key)
    if (topic === 'orders' && r.value !== null) {
      // re-key by customer, through the repartition topic
      const order = JSON.parse(text(r.value)!) as { customer: string }
      return [{ topic: repartition, key: bytes(order.customer), value: r.value, timestamp: r.timestamp }]
    }
    if (topic === 'customers' && key !== null) {
      // the customers table, kept in the customers-store (and its changelog)
      const name = text(r.value)
      if (name === null) names.delete(key)
      else names.set(key, name)
      return [{ topic: changelog, key: r.key, value: r.value, timestamp: r.timestamp }]
    }
    if (topic === repartition && key !== null && r.value !== null) {
      const order = JSON.parse(text(r.value)!) as { item: string; quantity: number }
      const who = names.get(key) ?? `customer ${key}`
      return [
        {
          topic: 'enriched-orders',
          key: r.key,
          value: bytes(`${who} ordered ${order.quantity} × ${order.item}`),
          timestamp: r.timestamp,
        },
      ]
    }
    return []
  }
}

/** The processing of the demo-inventory application (see inventoryApplication in demo.ts). */
export function inventoryLogic(applicationId: string): RecordHandler {
  const changelog = `${applicationId}-stock-levels-changelog`
  return (topic, r) => {
    const m = /^inventory-(.+)$/.exec(topic)
    if (m === null || r.value === null) return []
    const stock = JSON.parse(text(r.value)!) as { sku: string; quantity: number }
    const key = bytes(`${m[1]}/${stock.sku}`)
    // the stock-levels store (and its changelog), and an alert when the stock runs low
    const out: ProducerRecord[] = [
      { topic: changelog, key, value: bytes(String(stock.quantity)), timestamp: r.timestamp },
    ]
    if (stock.quantity < LOW_STOCK)
      out.push({
        topic: `alerts-${m[1]}`,
        key: bytes(stock.sku),
        value: bytes(`${stock.sku} low in ${m[1]}: ${stock.quantity} left`),
        timestamp: r.timestamp,
      })
    return out
  }
}

/** The topics the partitions of a subtopology's tasks are read from, by subtopology id. */
export function taskSourceTopics(topology: Topology, applicationId: string): Map<string, string[]> {
  const t = heartbeatTopology(topology, { applicationId })
  return new Map(
    t.subtopologies.map((s) => [
      s.subtopologyId,
      [...s.sourceTopics, ...s.repartitionSourceTopics.map((r) => r.name)],
    ]),
  )
}

/** The repartition topics an application's tasks read (their full names). */
export function repartitionSourceTopics(topology: Topology, applicationId: string): Set<string> {
  const t = heartbeatTopology(topology, { applicationId })
  return new Set(t.subtopologies.flatMap((s) => s.repartitionSourceTopics.map((r) => r.name)))
}

/**
 * What a member may purge, by Kafka Streams' rule (TaskManager.maybePurgeCommittedRecords,
 * StreamTask.purgeableOffsets): for each partition of its active tasks that is a repartition
 * topic's, the records before the offset this member last committed for it. A partition it owns
 * but has not committed yet (a task just assigned) gives nothing; other topics give nothing.
 */
export function purgeableOffsets(
  active: readonly { readonly topic: string; readonly partition: number }[],
  committed: ReadonlyMap<string, number>,
  repartitionTopics: ReadonlySet<string>,
): RecordsToDelete[] {
  const out: RecordsToDelete[] = []
  for (const { topic, partition } of active) {
    if (!repartitionTopics.has(topic)) continue
    const offset = committed.get(tpKey(topic, partition)) ?? -1
    if (offset > -1) out.push({ topic, partition, offset })
  }
  return out
}

export interface ProcessorDeps {
  readonly member: StreamsMember
  readonly applicationId: string
  readonly topology: Topology
  readonly handler: RecordHandler
  readonly fetcher: Fetcher
  readonly producer: Producer
  readonly admin: Admin
  readonly log: (line: string) => void
  /** how often offsets are committed (1000 ms) */
  readonly commitIntervalMs?: number
  /**
   * at least how long between two purges of the repartition topics (Kafka Streams'
   * `repartition.purge.interval.ms`, 30000 ms)
   */
  readonly purgeIntervalMs?: number
}

export interface TaskProcessor {
  /** records processed so far */
  readonly processed: () => number
  stop(): Promise<void>
}

const tpKey = (topic: string, partition: number): string => `${topic}-${partition}`

/**
 * The processing loop of one member: fetch the partitions of its active tasks (long poll), hand
 * every record to the application's handler, write what it returns, then commit the positions.
 * Partitions a member newly owns start at the group's committed offset (or the log start). A
 * commit holds the partitions whose records were processed since the last one: a partition it
 * owns and has read nothing of is never committed (Kafka Streams commits only the partitions its
 * tasks have consumed), so it keeps the group's committed offset, or none.
 */
export function startTaskProcessor(d: ProcessorDeps): TaskProcessor {
  const sources = taskSourceTopics(d.topology, d.applicationId)
  const repartition = repartitionSourceTopics(d.topology, d.applicationId)
  const positions = new Map<string, TopicPartitionPosition>()
  /** the offsets this member has committed, for the partitions it still owns */
  const committed = new Map<string, number>()
  const commitIntervalMs = d.commitIntervalMs ?? 1000
  const purgeIntervalMs = d.purgeIntervalMs ?? 30_000
  let processed = 0
  let stopped = false
  let lastCommit = 0
  let lastPurge = 0
  /** the DeleteRecords call in flight, if any: the next purge waits for it */
  let purging: Promise<unknown> | null = null
  /** the partitions whose position moved since this member last committed it */
  const uncommitted = new Set<string>()
  let failures = 0
  let wake: (() => void) | null = null
  const pause = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms)
      wake = () => {
        clearTimeout(t)
        resolve()
      }
    })

  const assigned = (): TopicPartitionPosition[] => {
    const out: TopicPartitionPosition[] = []
    for (const task of d.member.tasks().activeTasks)
      for (const topic of sources.get(task.subtopologyId) ?? [])
        for (const partition of task.partitions) out.push({ topic, partition, offset: -1 })
    return out
  }

  const startPositions = async (fresh: TopicPartitionPosition[]): Promise<void> => {
    const committed = new Map(
      (await d.admin.listStreamsGroupOffsets(d.applicationId)).map((o) => [
        tpKey(o.topic, o.partition),
        Number(o.offset),
      ]),
    )
    const missing = fresh.filter((p) => (committed.get(tpKey(p.topic, p.partition)) ?? -1) < 0)
    const earliest =
      missing.length === 0
        ? []
        : await d.admin.listOffsets(missing.map((p) => ({ ...p, spec: OffsetSpec.earliest() }))).all()
    for (const p of fresh) {
      const k = tpKey(p.topic, p.partition)
      const c = committed.get(k) ?? -1
      const e = earliest.find((x) => x.topic === p.topic && x.partition === p.partition)
      positions.set(k, { ...p, offset: c >= 0 ? c : Number(e?.offset ?? 0n) })
    }
  }

  const round = async (): Promise<void> => {
    const wanted = assigned()
    const wantedKeys = new Set(wanted.map((p) => tpKey(p.topic, p.partition)))
    for (const k of [...positions.keys()]) if (!wantedKeys.has(k)) positions.delete(k)
    for (const k of [...committed.keys()]) if (!wantedKeys.has(k)) committed.delete(k)
    for (const k of [...uncommitted]) if (!wantedKeys.has(k)) uncommitted.delete(k)
    const fresh = wanted.filter((p) => !positions.has(tpKey(p.topic, p.partition)))
    if (fresh.length > 0) await startPositions(fresh)
    if (positions.size === 0) {
      await pause(500)
      return
    }
    // Input topics before the application's own (internal) ones: a table is read before the
    // records joined with it.
    const internal = (t: string): number => (t.startsWith(`${d.applicationId}-`) ? 1 : 0)
    const fetched = (await d.fetcher.fetch([...positions.values()], { maxWaitMs: 500 })).sort(
      (a, b) => internal(a.topic) - internal(b.topic),
    )
    const out: ProducerRecord[] = []
    const moved: TopicPartitionPosition[] = []
    for (const f of fetched) {
      if (f.error !== null) {
        // out of range (records deleted): start again from the log start offset
        if (f.error.errorName === 'OFFSET_OUT_OF_RANGE') {
          positions.delete(tpKey(f.topic, f.partition))
          uncommitted.delete(tpKey(f.topic, f.partition))
        }
        continue
      }
      for (const r of f.records) out.push(...d.handler(f.topic, r))
      processed += f.records.length
      if (f.nextOffset !== positions.get(tpKey(f.topic, f.partition))?.offset)
        moved.push({ topic: f.topic, partition: f.partition, offset: f.nextOffset })
    }
    if (out.length > 0) await d.producer.send(out)
    for (const p of moved) {
      const k = tpKey(p.topic, p.partition)
      positions.set(k, p)
      uncommitted.add(k)
    }
    if (uncommitted.size > 0 && Date.now() - lastCommit >= commitIntervalMs) {
      lastCommit = Date.now()
      const offsets: TopicPartitionPosition[] = []
      for (const k of uncommitted) {
        const p = positions.get(k)
        if (p !== undefined) offsets.push(p)
      }
      try {
        await d.fetcher.commit(d.applicationId, d.member, offsets)
        // Only a round moves positions, and rounds run one at a time: what was sent is what is held.
        uncommitted.clear()
        for (const p of offsets) committed.set(tpKey(p.topic, p.partition), p.offset)
      } catch (e) {
        // the member's epoch moved on (a rebalance): the next round commits with the new one
        if (!(e instanceof KafkaError) || !e.retriable) log_(d.log, `${d.member.memberId}: commit`, e)
      }
    }
    maybePurge()
  }

  // As Kafka Streams' StreamThread.maybeCommit: once more than the purge interval has passed since
  // the last try, try again; the try sends nothing while the previous DeleteRecords is unanswered,
  // else it deletes what purgeableOffsets allows. Not awaited; a failure is not reported (the next
  // purge asks again, with newer offsets).
  const maybePurge = (): void => {
    const now = Date.now()
    if (now - lastPurge <= purgeIntervalMs) return
    lastPurge = now
    if (purging !== null) return
    const records = purgeableOffsets(assigned(), committed, repartition)
    if (records.length === 0) return
    purging = d.admin
      .deleteRecords(records)
      .settled()
      .finally(() => {
        purging = null
      })
  }

  const running = (async () => {
    while (!stopped) {
      try {
        await round()
        failures = 0
      } catch (e) {
        if (stopped) break
        if (isUnsupported(e)) {
          d.log(`${d.applicationId}: the cluster does not serve Fetch: this member processes nothing`)
          return
        }
        if (++failures === 1) log_(d.log, `${d.applicationId}: processing`, e)
        await pause(Math.min(5000, 250 * failures))
      }
    }
  })()

  return {
    processed: () => processed,
    stop: async () => {
      stopped = true
      wake?.()
      await running
      await purging
    },
  }
}
