/**
 * The group coordinator's metrics (Kafka's GroupCoordinatorMetrics) as Prometheus metrics: the
 * KIP-1331 sensors (kip1331-broker.md §1.7), the consumer group rebalance sensor, and the group-count
 * gauges (docs/consumer-groups.md). Kafka
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
import { Counter, Gauge, type Registry, register } from 'prom-client'
import type {
  ConsumerGroupSensor,
  ConsumerGroupSensors,
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
export function prometheusName(sensor: TopologyDescriptionSensor | ConsumerGroupSensor): string {
  return `kafka_server_${KAFKA_METRICS_GROUP}_${sensor}_count`.replace(/-/g, '_')
}

/** A counter per sensor of `table` in `registry` (existing counters with the same names are reused). */
function meterCounters<S extends TopologyDescriptionSensor | ConsumerGroupSensor>(
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

/** Kafka's consumer group sensors (Meters: `<base>-count` and `<base>-rate`), with their descriptions. */
export const CONSUMER_GROUP_SENSORS: Readonly<Record<ConsumerGroupSensor, string>> = Object.freeze({
  'consumer-group-rebalance':
    'Consumer group rebalances: group epoch bumps of ConsumerGroupHeartbeat, leaves excluded.',
})

/** Consumer group sensors backed by counters of `registry` (existing counters are reused). */
export function prometheusConsumerGroupSensors(registry: Registry = register): ConsumerGroupSensors {
  return meterCounters(CONSUMER_GROUP_SENSORS, registry)
}

/** The group protocols Kafka's `group-count` gauge is tagged with (Topograph serves no share groups). */
const GROUP_PROTOCOLS = ['classic', 'consumer', 'streams'] as const

/** Kafka's ConsumerGroupState names: the `state` tag of `consumer-group-count`. */
const CONSUMER_GROUP_STATES = ['Empty', 'Assigning', 'Reconciling', 'Stable', 'Dead'] as const

export const GROUP_COUNT_METRIC = `kafka_server_${KAFKA_METRICS_GROUP}_group_count`.replace(/-/g, '_')
export const CONSUMER_GROUP_COUNT_METRIC = `kafka_server_${KAFKA_METRICS_GROUP}_consumer_group_count`.replace(
  /-/g,
  '_',
)

/**
 * Kafka's group-count gauges, read from the coordinator at scrape time: `group-count` tagged
 * `protocol` (classic, consumer, streams) and `consumer-group-count` tagged `state` (every state
 * Kafka registers, Dead included, which a Topograph group never reports). With several servers in
 * one process the last one installed is reported, as for the log sizes.
 */
export function installGroupCountGauges(
  counts: () => Promise<GroupCounts>,
  registry: Registry = register,
): void {
  for (const name of [GROUP_COUNT_METRIC, CONSUMER_GROUP_COUNT_METRIC]) {
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
  new Gauge({
    name: CONSUMER_GROUP_COUNT_METRIC,
    help: `Consumer groups by state. Kafka: ${KAFKA_METRICS_GROUP} consumer-group-count{state}.`,
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const states = (await read()).byTypeAndState.get('consumer')
      for (const state of CONSUMER_GROUP_STATES) this.set({ state }, states?.get(state) ?? 0)
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
  const consumer = prometheusConsumerGroupSensors(register)
  subscribe(TOPOLOGY_DESCRIPTION_METRICS_CHANNEL, (message) => {
    const m = message as { sensor?: unknown; value?: unknown }
    if (typeof m.sensor !== 'string' || typeof m.value !== 'number') return
    if (m.sensor in TOPOLOGY_DESCRIPTION_SENSORS) {
      sensors.record(m.sensor as TopologyDescriptionSensor, m.value)
    } else if (m.sensor in CONSUMER_GROUP_SENSORS) {
      consumer.record(m.sensor as ConsumerGroupSensor, m.value)
    }
  })
  installed = sensors
  return sensors
}
