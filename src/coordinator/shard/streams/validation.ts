/**
 * StreamsGroupHeartbeat request checks that run before the shard touches the group: Kafka's
 * KafkaApis topic-name checks (internal and invalid topic names) and the service's field checks,
 * in Kafka's order, with Kafka's messages.
 */
import { ErrorCode } from '../../../protocol/errors.js'
import { isInternalTopic, isValidTopicName } from '../../../protocol/topics.js'
import { ApiError, invalidRequest, invalidTopology } from '../api-error.js'
import { validateCommonHeartbeat } from '../modern/membership.js'
import { topologyTopicNames } from './topology.js'
import type { StreamsGroupHeartbeatRequest } from './wire.js'

export function validateHeartbeatRequest(req: StreamsGroupHeartbeatRequest): void {
  if (req.topology !== null) {
    const names = topologyTopicNames(req.topology.subtopologies)
    const internal = names.filter(isInternalTopic)
    if (internal.length > 0) {
      throw invalidTopology(
        `Use of Kafka internal topics ${internal.join(',')} in a Kafka Streams topology is prohibited.`,
      )
    }
    const invalid = names.filter((n) => !isValidTopicName(n))
    if (invalid.length > 0)
      throw invalidTopology(`Topic names ${invalid.join(',')} are not valid topic names.`)
    if (req.topology.subtopologies.some((s) => s.sourceTopicRegex.length > 0)) {
      throw invalidRequest('Regular expressions for source topics are not supported yet.')
    }
  }
  validateCommonHeartbeat(req, true)
  if (req.memberEpoch === 0) {
    for (const [name, list] of [
      ['ActiveTasks', req.activeTasks],
      ['StandbyTasks', req.standbyTasks],
      ['WarmupTasks', req.warmupTasks],
    ] as const) {
      if (list === null || list.length > 0) throw invalidRequest(`${name} must be empty when (re-)joining.`)
    }
    if (req.topology === null) throw invalidRequest('Topology must be non-null when (re-)joining.')
    for (const s of req.topology.subtopologies) {
      for (const t of s.stateChangelogTopics) {
        if (t.partitions !== 0) {
          throw new ApiError(
            ErrorCode.STREAMS_INVALID_TOPOLOGY,
            `Changelog topic ${t.name} must have an undefined partition count, but it is set to ${t.partitions}.`,
          )
        }
      }
    }
  }
  if (req.memberEpoch === -2 && req.instanceId === null) throw invalidRequest("InstanceId can't be null.")
  if (req.memberEpoch < -2) {
    throw invalidRequest(`MemberEpoch is ${req.memberEpoch}, but must be greater than or equal to -2.`)
  }
  const nonNull =
    (req.activeTasks !== null ? 1 : 0) +
    (req.standbyTasks !== null ? 1 : 0) +
    (req.warmupTasks !== null ? 1 : 0)
  if (nonNull > 0 && nonNull < 3) throw invalidRequest('If one task-type is non-null, all must be non-null.')
  if (req.memberEpoch !== 0 && req.topology !== null)
    throw invalidRequest('Topology can only be provided when (re-)joining.')
}
