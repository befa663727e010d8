/**
 * Kafka's broker topic metrics and log sizes, as Prometheus metrics named the way a JMX exporter
 * names Kafka's MBeans (lower case, `_` for separators, the Meter's `Count` attribute):
 *
 * | Kafka MBean                                                      | Prometheus                                                   |
 * |------------------------------------------------------------------|--------------------------------------------------------------|
 * | kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec       | kafka_server_brokertopicmetrics_messagesinpersec_count       |
 * | …,name=BytesInPerSec / BytesOutPerSec                            | …_bytesinpersec_count / …_bytesoutpersec_count               |
 * | …,name=BytesRejectedPerSec                                       | …_bytesrejectedpersec_count                                  |
 * | …,name=FailedProduceRequestsPerSec / FailedFetchRequestsPerSec   | …_failedproducerequestspersec_count / …_failedfetch…_count   |
 * | …,name=TotalProduceRequestsPerSec / TotalFetchRequestsPerSec     | …_totalproducerequestspersec_count / …_totalfetch…_count     |
 * | kafka.log:type=Log,name=Size,topic=T,partition=P                  | kafka_log_log_size{topic,partition}                          |
 * | kafka.server:type=FetchSessionCache,name=NumIncrementalFetchSessions | kafka_server_fetchsessioncache_numincrementalfetchsessions |
 * | …,name=NumIncrementalFetchPartitionsCached                       | …_numincrementalfetchpartitionscached                        |
 * | …,name=IncrementalFetchSessionEvictionsPerSec                    | …_incrementalfetchsessionevictionspersec_count               |
 *
 * As in Kafka each broker topic metric exists once per topic (label `topic`) and once for all
 * topics (no label); a rate is `rate()` over the counter. The all-topics series exist from the
 * start, at 0 (Kafka registers its all-topics meters when the broker starts); a topic's series
 * appear with its first value and go when the topic is deleted (Kafka's
 * `BrokerTopicStats.removeMetrics`). Log sizes and the fetch session cache are read at scrape time.
 */
import { Counter, Gauge, type Registry, register } from 'prom-client'
import { ErrorCode } from '../../protocol/errors.js'

const METERS = {
  messagesIn: ['messagesinpersec', 'Records appended (MessagesInPerSec).'],
  bytesIn: ['bytesinpersec', 'Record bytes appended by Produce requests (BytesInPerSec).'],
  bytesOut: ['bytesoutpersec', 'Record bytes returned by Fetch requests (BytesOutPerSec).'],
  bytesRejected: ['bytesrejectedpersec', 'Record bytes of Produce partitions refused (BytesRejectedPerSec).'],
  failedProduce: [
    'failedproducerequestspersec',
    'Produce partitions that failed (FailedProduceRequestsPerSec).',
  ],
  failedFetch: ['failedfetchrequestspersec', 'Fetch partitions that failed (FailedFetchRequestsPerSec).'],
  totalProduce: ['totalproducerequestspersec', 'Produce partitions received (TotalProduceRequestsPerSec).'],
  totalFetch: ['totalfetchrequestspersec', 'Fetch partitions received (TotalFetchRequestsPerSec).'],
} as const

export type BrokerTopicMeter = keyof typeof METERS

/**
 * Append errors Kafka's ReplicaManager answers without counting a failed produce request: the meter
 * is for unexpected failures of the broker, not for these known ones (`appendToLocalLog`).
 * Everything else an append refuses counts (a record that fails validation, a producer's sequence
 * or epoch, an unexpected error).
 */
const PRODUCE_KNOWN_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.MESSAGE_TOO_LARGE,
  ErrorCode.RECORD_LIST_TOO_LARGE,
  ErrorCode.CORRUPT_MESSAGE,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.UNKNOWN_TOPIC_ID,
])

/** Whether an append's error counts in FailedProduceRequestsPerSec, as Kafka counts it. */
export function isFailedProduce(errorCode: number): boolean {
  return errorCode !== ErrorCode.NONE && !PRODUCE_KNOWN_ERRORS.has(errorCode)
}

/** Whether an append's error counts its bytes in BytesRejectedPerSec: only a batch too large does. */
export function isBytesRejected(errorCode: number): boolean {
  return errorCode === ErrorCode.MESSAGE_TOO_LARGE || errorCode === ErrorCode.RECORD_LIST_TOO_LARGE
}

/**
 * Read errors Kafka's ReplicaManager answers without counting a failed fetch request
 * (`readFromLocalLog`; an offset out of range is answered as one), and the refusals that come
 * before the read (authorization, an unknown topic id).
 */
const FETCH_KNOWN_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.INCONSISTENT_TOPIC_ID,
  ErrorCode.OFFSET_OUT_OF_RANGE,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.TOPIC_AUTHORIZATION_FAILED,
])

/** Whether a partition's Fetch error counts in FailedFetchRequestsPerSec, as Kafka counts it. */
export function isFailedFetch(errorCode: number): boolean {
  return errorCode !== ErrorCode.NONE && !FETCH_KNOWN_ERRORS.has(errorCode)
}

/** The Prometheus name of a broker topic meter. */
export function brokerTopicMetricName(meter: BrokerTopicMeter): string {
  return `kafka_server_brokertopicmetrics_${METERS[meter][0]}_count`
}

export const LOG_SIZE_METRIC = 'kafka_log_log_size'

/** One partition's size, for the log-size gauge. */
export interface PartitionSize {
  readonly topic: string
  readonly partition: number
  readonly size: number
}

/**
 * What each counter folds in when it is read: the pending sums of every BrokerTopicMetrics sharing
 * it (several servers in one process share the registry's counters).
 */
const pendingOf = new WeakMap<Counter, Set<() => void>>()

export class BrokerTopicMetrics {
  /**
   * Per meter, the sums recorded since the counters were last read, per topic and over all topics.
   * prom-client hashes the label object on every `inc` (a child from `labels()` too), which cost
   * more than the rest of a small Produce's bookkeeping; a Map add per call is enough, and the
   * counters get the sums at scrape time (`collect`).
   */
  readonly #pending = new Map<BrokerTopicMeter, { byTopic: Map<string, number>; all: number }>()
  readonly #counters = new Map<BrokerTopicMeter, Counter>()

  /**
   * Registers (or reuses) the counters in `registry`. `sizes` lists every partition's size at
   * scrape time; with several servers in one process the last one's sizes are reported.
   */
  constructor(sizes: () => Iterable<PartitionSize>, registry: Registry = register) {
    for (const meter of Object.keys(METERS) as BrokerTopicMeter[]) {
      const name = brokerTopicMetricName(meter)
      const existing = registry.getSingleMetric(name)
      const ours = existing instanceof Counter && pendingOf.has(existing)
      // A counter of that name this module did not make (another copy of it) cannot fold our sums.
      if (existing !== undefined && !ours) registry.removeSingleMetric(name)
      const counter = ours
        ? existing
        : new Counter({
            name,
            help: `${METERS[meter][1]} Kafka: kafka.server:type=BrokerTopicMetrics.`,
            labelNames: ['topic'],
            registers: [registry],
            collect() {
              for (const fold of pendingOf.get(this) ?? []) fold()
            },
          })
      if (!pendingOf.has(counter)) {
        pendingOf.set(counter, new Set())
        // The all-topics series, at 0 until the first value.
        counter.inc(0)
      }
      this.#counters.set(meter, counter)
      const pending = { byTopic: new Map<string, number>(), all: 0 }
      this.#pending.set(meter, pending)
      pendingOf.get(counter)!.add(() => {
        for (const [topic, value] of pending.byTopic) counter.inc({ topic }, value)
        if (pending.all > 0) counter.inc(pending.all)
        pending.byTopic.clear()
        pending.all = 0
      })
    }
    const existing = registry.getSingleMetric(LOG_SIZE_METRIC)
    if (existing !== undefined) registry.removeSingleMetric(LOG_SIZE_METRIC)
    new Gauge({
      name: LOG_SIZE_METRIC,
      help: 'Bytes of a partition log (Kafka: kafka.log:type=Log,name=Size).',
      labelNames: ['topic', 'partition'],
      registers: [registry],
      collect() {
        this.reset()
        for (const p of sizes()) this.set({ topic: p.topic, partition: String(p.partition) }, p.size)
      },
    })
  }

  /**
   * Drops a deleted topic's series from every meter (its values not yet read included); the
   * all-topics series keep what the topic added to them. A topic created again under the same name
   * starts from 0, as in Kafka.
   */
  removeTopic(topic: string): void {
    for (const [meter, counter] of this.#counters) {
      this.#pending.get(meter)!.byTopic.delete(topic)
      counter.remove({ topic })
    }
  }

  /** Adds `value` to the topic's meter and to the all-topics meter (seen by the next scrape). */
  record(meter: BrokerTopicMeter, topic: string, value = 1): void {
    if (value <= 0) return
    const p = this.#pending.get(meter)!
    p.byTopic.set(topic, (p.byTopic.get(topic) ?? 0) + value)
    p.all += value
  }
}

export const FETCH_SESSIONS_METRIC = 'kafka_server_fetchsessioncache_numincrementalfetchsessions'
export const FETCH_SESSION_PARTITIONS_METRIC =
  'kafka_server_fetchsessioncache_numincrementalfetchpartitionscached'
export const FETCH_SESSION_EVICTIONS_METRIC =
  'kafka_server_fetchsessioncache_incrementalfetchsessionevictionspersec_count'

/** What the fetch session cache holds, read at scrape time. */
export interface FetchSessionCounts {
  readonly sessions: number
  readonly partitionsCached: number
  /** Sessions evicted since start-up. */
  readonly evictions: number
}

/**
 * Kafka's FetchSessionCache metrics: the incremental fetch sessions cached, the partitions they
 * cache, and the sessions evicted to make room (a Meter; its count here). With several servers in
 * one process the last one installed is reported.
 */
export function installFetchSessionMetrics(
  read: () => FetchSessionCounts,
  registry: Registry = register,
): void {
  for (const name of [
    FETCH_SESSIONS_METRIC,
    FETCH_SESSION_PARTITIONS_METRIC,
    FETCH_SESSION_EVICTIONS_METRIC,
  ]) {
    if (registry.getSingleMetric(name) !== undefined) registry.removeSingleMetric(name)
  }
  new Gauge({
    name: FETCH_SESSIONS_METRIC,
    help: 'Incremental fetch sessions cached. Kafka: kafka.server:type=FetchSessionCache,name=NumIncrementalFetchSessions.',
    registers: [registry],
    collect() {
      this.set(read().sessions)
    },
  })
  new Gauge({
    name: FETCH_SESSION_PARTITIONS_METRIC,
    help: 'Partitions cached by the incremental fetch sessions. Kafka: kafka.server:type=FetchSessionCache,name=NumIncrementalFetchPartitionsCached.',
    registers: [registry],
    collect() {
      this.set(read().partitionsCached)
    },
  })
  new Counter({
    name: FETCH_SESSION_EVICTIONS_METRIC,
    help: 'Incremental fetch sessions evicted to make room for new ones. Kafka: kafka.server:type=FetchSessionCache,name=IncrementalFetchSessionEvictionsPerSec.',
    registers: [registry],
    collect() {
      // The total is the cache's own: the counter takes it as it is.
      this.reset()
      this.inc(read().evictions)
    },
  })
}
