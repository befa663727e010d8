/**
 * Interactive-query endpoint information (Kafka's EndpointToPartitionsManager): for each member
 * with a user endpoint, the input partitions behind its active tasks and behind its standby and
 * warm-up tasks.
 */
import type { ConfiguredTopology } from './configured-topology.js'
import type { StreamsGroupMember } from './member.js'
import { forEachTask, type TaskSet, TaskSetBuilder } from './tasks.js'
import type { EndpointToPartitions, TopicPartitions } from './wire.js'

function partitionsFor(tasks: TaskSet, configured: ConfiguredTopology): TopicPartitions[] {
  const subtopologies = configured.subtopologies
  // Without configured subtopologies the entry carries empty lists (a choice; see docs/streams-groups.md).
  if (subtopologies === null) return []
  const byTopic = new Map<string, Set<number>>()
  forEachTask(tasks, (id, p) => {
    const s = subtopologies.get(id)
    if (!s) return
    // Each input topic contributes partition p only when it has that many partitions.
    const topics: [string, number][] = [
      ...s.sourceTopics.map((t): [string, number] => [
        t,
        configured.sourcePartitionCounts?.get(t) ?? s.numberOfTasks,
      ]),
      ...[...s.repartitionSourceTopics.values()].map((t): [string, number] => [t.name, t.numberOfPartitions]),
    ]
    for (const [topic, n] of topics) {
      if (p >= n) continue
      let set = byTopic.get(topic)
      if (!set) byTopic.set(topic, (set = new Set()))
      set.add(p)
    }
  })
  return [...byTopic.keys()]
    .sort()
    .map((topic) => ({ topic, partitions: [...byTopic.get(topic)!].sort((a, b) => a - b) }))
}

export function buildEndpointToPartitions(
  members: readonly StreamsGroupMember[],
  configured: ConfiguredTopology,
): EndpointToPartitions[] {
  const out: EndpointToPartitions[] = []
  for (const m of members) {
    if (m.userEndpoint === null) continue
    const standby = new TaskSetBuilder()
    forEachTask(m.assignedTasks.standby, (id, p) => standby.add(id, p))
    forEachTask(m.assignedTasks.warmup, (id, p) => standby.add(id, p))
    out.push({
      userEndpoint: { host: m.userEndpoint.host, port: m.userEndpoint.port },
      activePartitions: partitionsFor(m.assignedTasks.active, configured),
      standbyPartitions: partitionsFor(standby.build(), configured),
    })
  }
  return out
}
