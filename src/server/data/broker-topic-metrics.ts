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
 *
 * As in Kafka each broker topic metric exists once per topic (label `topic`) and once for all
 * topics (no label); a rate is `rate()` over the counter. Log sizes are read at scrape time.
 */
import { Counter, Gauge, type Registry, register } from 'prom-client'

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
      if (!pendingOf.has(counter)) pendingOf.set(counter, new Set())
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

  /** Adds `value` to the topic's meter and to the all-topics meter (seen by the next scrape). */
  record(meter: BrokerTopicMeter, topic: string, value = 1): void {
    if (value <= 0) return
    const p = this.#pending.get(meter)!
    p.byTopic.set(topic, (p.byTopic.get(topic) ?? 0) + value)
    p.all += value
  }
}
