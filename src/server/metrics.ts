/**
 * The group coordinator's metrics (Kafka's GroupCoordinatorMetrics) as Prometheus metrics: the
 * KIP-1331 sensors (kip1331-broker.md §1.7), the rebalance and offset sensors, and the group-count
 * and offset-count gauges (docs/coordinator.md). Kafka
 * records each of its eight sensors in the metrics group `group-coordinator-metrics` as a Meter with
 * `<base>-count` (a cumulative sum of the recorded values) and `<base>-rate`. Here every sensor is
 * one counter named like a JMX exporter names Kafka's `-count` attribute:
 * `kafka_server_group_coordinator_metrics_<base with _ for ->_count`; a rate is `rate()` over it.
 *
 * The coordinator service publishes `{ sensor, value }` on a diagnostics channel (the service may not
 * import the server); {@link installGroupCoordinatorMetrics} subscribes once per process and feeds
 * the counters of a prom-client registry — by default prom-client's global one, which the console's
 * `/metrics` serves.
 */
import { subscribe } from 'node:diagnostics_channel'
import { Counter, collectDefaultMetrics, Gauge, type Registry, register } from 'prom-client'
import type {
  GroupCoordinatorSensor,
  GroupCoordinatorSensors,
  GroupCounts,
} from '../coordinator/service/group-coordinator-service.js'
import {
  TOPOLOGY_DESCRIPTION_METRICS_CHANNEL,
  type TopologyDescriptionSensor,
  type TopologyDescriptionSensors,
} from '../coordinator/service/topology-description-manager.js'

/** Kafka's sensor → metric base name, with the description of what is recorded. */
export const TOPOLOGY_DESCRIPTION_SENSORS: Readonly<Record<TopologyDescriptionSensor, string>> =
  Object.freeze({
    'streams-group-topology-description-cleanup-cycle':
      'Topology-description cleanup cycles run (1 per cycle).',
    'streams-group-topology-description-cleanup-eligible':
      'Streams groups found eligible for topology-description cleanup (the size of each non-empty per-partition set).',
    'streams-group-topology-description-delete-success': 'Successful topology description plugin deletes.',
    'streams-group-topology-description-delete-error': 'Failed topology description plugin deletes.',
    'streams-group-topology-description-set-success': 'Topology description pushes the plugin stored.',
    'streams-group-topology-description-set-error':
      'Topology description pushes the plugin failed (permanent or transient).',
    'streams-group-topology-description-get-success':
      'Completed topology description plugin reads, including reads that found nothing.',
    'streams-group-topology-description-get-error': 'Failed topology description plugin reads.',
  })

export const KAFKA_METRICS_GROUP = 'group-coordinator-metrics'

/** The Prometheus name of a sensor's `-count` metric. */
export function prometheusName(sensor: TopologyDescriptionSensor | GroupCoordinatorSensor): string {
  return `kafka_server_${KAFKA_METRICS_GROUP}_${sensor}_count`.replace(/-/g, '_')
}

/** A counter per sensor of `table` in `registry` (existing counters with the same names are reused). */
function meterCounters<S extends TopologyDescriptionSensor | GroupCoordinatorSensor>(
  table: Readonly<Record<S, string>>,
  registry: Registry,
): { record(sensor: S, value: number): void } {
  const counters = new Map<S, Counter>()
  for (const [sensor, help] of Object.entries(table) as [S, string][]) {
    const name = prometheusName(sensor)
    const existing = registry.getSingleMetric(name)
    counters.set(
      sensor,
      existing instanceof Counter
        ? existing
        : new Counter({
            name,
            help: `${help} Kafka: ${KAFKA_METRICS_GROUP} ${sensor}-count.`,
            registers: [registry],
          }),
    )
  }
  return {
    record(sensor, value) {
      counters.get(sensor)?.inc(value)
    },
  }
}

/** Sensors backed by counters of `registry` (existing counters with the same names are reused). */
export function prometheusSensors(registry: Registry = register): TopologyDescriptionSensors {
  return meterCounters(TOPOLOGY_DESCRIPTION_SENSORS, registry)
}

/**
 * Kafka's rebalance and offset sensors (Meters: `<base>-count` and `<base>-rate`), with their
 * descriptions.
 */
export const GROUP_COORDINATOR_SENSORS: Readonly<Record<GroupCoordinatorSensor, string>> = Object.freeze({
  'consumer-group-rebalance':
    'Consumer group rebalances: group epoch bumps of ConsumerGroupHeartbeat, leaves excluded.',
  'streams-group-rebalance':
    'Streams group rebalances: group epoch bumps of StreamsGroupHeartbeat, leaves excluded.',
  'group-completed-rebalance': "Classic group completed rebalances: a leader's SyncGroup assignment stored.",
  'offset-commit': 'Committed offsets (OffsetCommit and TxnOffsetCommit partitions written).',
  'offset-expiration': 'Offsets removed by the expiry sweep.',
  'offset-deletion': 'Offsets removed by OffsetDelete.',
})

/** Rebalance and offset sensors backed by counters of `registry` (existing counters are reused). */
export function prometheusGroupCoordinatorSensors(registry: Registry = register): GroupCoordinatorSensors {
  return meterCounters(GROUP_COORDINATOR_SENSORS, registry)
}

/** The group protocols Kafka's `group-count` gauge is tagged with (Topograph serves no share groups). */
const GROUP_PROTOCOLS = ['classic', 'consumer', 'streams'] as const

/**
 * Per group type, Kafka's gauge of groups by state and the states it is registered with (Dead
 * included, which a Topograph group never reports: a deleted group is gone).
 */
const STATE_GAUGES = {
  consumer: ['consumer-group-count', ['Empty', 'Assigning', 'Reconciling', 'Stable', 'Dead']],
  classic: ['classic-group-count', ['PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead', 'Empty']],
  streams: ['streams-group-count', ['Empty', 'Assigning', 'Reconciling', 'Stable', 'Dead', 'NotReady']],
} as const

const gaugeName = (base: string) => `kafka_server_${KAFKA_METRICS_GROUP}_${base}`.replace(/-/g, '_')

export const GROUP_COUNT_METRIC = gaugeName('group-count')
export const CONSUMER_GROUP_COUNT_METRIC = gaugeName('consumer-group-count')
export const CLASSIC_GROUP_COUNT_METRIC = gaugeName('classic-group-count')
export const STREAMS_GROUP_COUNT_METRIC = gaugeName('streams-group-count')
export const OFFSET_COUNT_METRIC = gaugeName('offset-count')

/**
 * Kafka's group-count gauges, read from the coordinator at scrape time: `group-count` tagged
 * `protocol` (classic, consumer, streams); `consumer-group-count`, `classic-group-count` and
 * `streams-group-count` tagged `state` (every state Kafka registers); `offset-count`, the committed
 * offsets. With several servers in one process the last one installed is reported, as for the log
 * sizes.
 */
export function installGroupCountGauges(
  counts: () => Promise<GroupCounts>,
  registry: Registry = register,
): void {
  for (const name of [
    GROUP_COUNT_METRIC,
    CONSUMER_GROUP_COUNT_METRIC,
    CLASSIC_GROUP_COUNT_METRIC,
    STREAMS_GROUP_COUNT_METRIC,
    OFFSET_COUNT_METRIC,
  ]) {
    if (registry.getSingleMetric(name) !== undefined) registry.removeSingleMetric(name)
  }
  let pending: Promise<GroupCounts> | null = null
  // One coordinator read serves both gauges of a scrape.
  const read = (): Promise<GroupCounts> => {
    pending ??= counts().finally(() => {
      pending = null
    })
    return pending
  }
  new Gauge({
    name: GROUP_COUNT_METRIC,
    help: `Groups by rebalance protocol. Kafka: ${KAFKA_METRICS_GROUP} group-count{protocol}.`,
    labelNames: ['protocol'],
    registers: [registry],
    async collect() {
      const c = await read()
      for (const protocol of GROUP_PROTOCOLS) this.set({ protocol }, c.byType.get(protocol) ?? 0)
    },
  })
  for (const [type, [base, states]] of Object.entries(STATE_GAUGES)) {
    new Gauge({
      name: gaugeName(base),
      help: `${type[0].toUpperCase()}${type.slice(1)} groups by state. Kafka: ${KAFKA_METRICS_GROUP} ${base}{state}.`,
      labelNames: ['state'],
      registers: [registry],
      async collect() {
        const byState = (await read()).byTypeAndState.get(type)
        for (const state of states) this.set({ state }, byState?.get(state) ?? 0)
      },
    })
  }
  new Gauge({
    name: OFFSET_COUNT_METRIC,
    help: `Committed offsets of every group. Kafka: ${KAFKA_METRICS_GROUP} offset-count.`,
    registers: [registry],
    async collect() {
      this.set((await read()).offsets)
    },
  })
}

let installed: TopologyDescriptionSensors | null = null

/**
 * Subscribes prom-client's default registry to the coordinator's sensors, once per process (every
 * server of the process records into the same counters, as one JVM's brokers share one registry).
 */
export function installGroupCoordinatorMetrics(): TopologyDescriptionSensors {
  if (installed !== null) return installed
  const sensors = prometheusSensors(register)
  const groups = prometheusGroupCoordinatorSensors(register)
  subscribe(TOPOLOGY_DESCRIPTION_METRICS_CHANNEL, (message) => {
    const m = message as { sensor?: unknown; value?: unknown }
    if (typeof m.sensor !== 'string' || typeof m.value !== 'number') return
    if (m.sensor in TOPOLOGY_DESCRIPTION_SENSORS) {
      sensors.record(m.sensor as TopologyDescriptionSensor, m.value)
    } else if (m.sensor in GROUP_COORDINATOR_SENSORS) {
      groups.record(m.sensor as GroupCoordinatorSensor, m.value)
    }
  })
  installed = sensors
  return sensors
}

export const REQUESTS_METRIC = 'kafka_network_requestmetrics_requestspersec_count'
export const CONNECTION_COUNT_METRIC = 'kafka_server_socket_server_metrics_connection_count'

/** What the server's request and connection metrics read at scrape time. */
export interface ServerMetricsSource {
  /** Requests read so far, per API name (Kafka's `ApiKeys` name) and version. */
  requestCounts(): Iterable<{ readonly request: string; readonly version: number; readonly count: number }>
  /** Open connections per listener name. */
  connectionCounts(): Iterable<{ readonly listener: string; readonly count: number }>
}

/**
 * Kafka's request and connection metrics: `RequestsPerSec` per request and version (a Meter;
 * its count here, `rate()` for the rate) and each listener's `connection-count`. Both are read from
 * the server at scrape time; with several servers in one process the last one installed is
 * reported, as for the group counts.
 */
export function installServerMetrics(source: ServerMetricsSource, registry: Registry = register): void {
  for (const name of [REQUESTS_METRIC, CONNECTION_COUNT_METRIC]) {
    if (registry.getSingleMetric(name) !== undefined) registry.removeSingleMetric(name)
  }
  new Counter({
    name: REQUESTS_METRIC,
    help: 'Requests read, per request and version. Kafka: kafka.network:type=RequestMetrics,name=RequestsPerSec.',
    labelNames: ['request', 'version'],
    registers: [registry],
    collect() {
      // The totals are the server's own: the counter takes them as they are.
      this.reset()
      for (const r of source.requestCounts())
        this.inc({ request: r.request, version: String(r.version) }, r.count)
    },
  })
  new Gauge({
    name: CONNECTION_COUNT_METRIC,
    help: 'Open connections per listener. Kafka: kafka.server:type=socket-server-metrics connection-count.',
    labelNames: ['listener'],
    registers: [registry],
    collect() {
      this.reset()
      for (const l of source.connectionCounts()) this.set({ listener: l.listener }, l.count)
    },
  })
}

let processMetrics = false

/**
 * prom-client's process and Node.js metrics (`process_cpu_seconds_total`,
 * `process_resident_memory_bytes`, `nodejs_heap_size_used_bytes`, `nodejs_eventloop_lag_seconds`,
 * `nodejs_gc_duration_seconds`, …), the counterpart of the JVM metrics a Kafka broker exposes:
 * once per process, on the default registry.
 */
export function installProcessMetrics(): void {
  if (processMetrics) return
  processMetrics = true
  collectDefaultMetrics()
}
