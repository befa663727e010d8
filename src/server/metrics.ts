/**
 * The group coordinator's KIP-1331 sensors as Prometheus counters (kip1331-broker.md §1.7). Kafka
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
import { Counter, type Registry, register } from 'prom-client'
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
export function prometheusName(sensor: TopologyDescriptionSensor): string {
  return `kafka_server_${KAFKA_METRICS_GROUP}_${sensor}_count`.replace(/-/g, '_')
}

/** Sensors backed by counters of `registry` (existing counters with the same names are reused). */
export function prometheusSensors(registry: Registry = register): TopologyDescriptionSensors {
  const counters = new Map<TopologyDescriptionSensor, Counter>()
  for (const [sensor, help] of Object.entries(TOPOLOGY_DESCRIPTION_SENSORS) as [
    TopologyDescriptionSensor,
    string,
  ][]) {
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

let installed: TopologyDescriptionSensors | null = null

/**
 * Subscribes prom-client's default registry to the coordinator's sensors, once per process (every
 * server of the process records into the same counters, as one JVM's brokers share one registry).
 */
export function installGroupCoordinatorMetrics(): TopologyDescriptionSensors {
  if (installed !== null) return installed
  const sensors = prometheusSensors(register)
  subscribe(TOPOLOGY_DESCRIPTION_METRICS_CHANNEL, (message) => {
    const m = message as { sensor?: unknown; value?: unknown }
    if (
      typeof m.sensor === 'string' &&
      typeof m.value === 'number' &&
      m.sensor in TOPOLOGY_DESCRIPTION_SENSORS
    ) {
      sensors.record(m.sensor as TopologyDescriptionSensor, m.value)
    }
  })
  installed = sensors
  return sensors
}
