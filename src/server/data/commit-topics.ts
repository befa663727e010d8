/**
 * The topic checks OffsetCommit (8) and TxnOffsetCommit (28) make before the group coordinator is
 * asked, in Kafka's order (KafkaApis): an id no topic has (UNKNOWN_TOPIC_ID, versions that name
 * topics by id); no READ on the topic name, whether or not the topic exists
 * (TOPIC_AUTHORIZATION_FAILED); an unknown topic or partition (UNKNOWN_TOPIC_OR_PARTITION).
 */
import type { OffsetCommitPartitionInput } from '../../coordinator/shard/offsets/offset-metadata-manager.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { RequestContext } from '../router.js'

export interface CommitTopic {
  readonly name: string
  readonly topicId: string
  readonly partitions: readonly OffsetCommitPartitionInput[]
}

export interface CheckedCommitTopics {
  /** Per request topic and partition: its refusal, or null when it goes to the coordinator. */
  readonly errors: (number | null)[][]
  /** The partitions that passed, by topic, names resolved. */
  readonly valid: { name: string; topicId: string; partitions: OffsetCommitPartitionInput[] }[]
  /** Every partition passed: `valid` has every request topic, in order, with all its partitions. */
  readonly allValid: boolean
}

/**
 * `topicIdOf` gives the topic id kept with the offsets of a topic that passed (OffsetCommit keeps
 * none below v10; TxnOffsetCommit takes it from the catalog at every version, as Kafka does).
 */
export function checkCommitTopics(
  ctx: RequestContext,
  topics: readonly CommitTopic[],
  useTopicIds: boolean,
  topicIdOf: (catalogTopicId: string) => string,
): CheckedCommitTopics {
  const { server } = ctx
  const errors: (number | null)[][] = []
  const valid: CheckedCommitTopics['valid'] = []
  let allValid = true
  for (const t of topics) {
    const info = useTopicIds ? server.topics.byId(t.topicId) : server.topics.byName(t.name)
    const name = useTopicIds ? info?.name : t.name
    const mayRead = name !== undefined && server.authorizer.authorize(ctx.principal, 'READ', 'TOPIC', name)
    const topicErrors: (number | null)[] = []
    const accepted: OffsetCommitPartitionInput[] = []
    for (const p of t.partitions) {
      let error: number | null = null
      if (name === undefined) error = ErrorCode.UNKNOWN_TOPIC_ID
      else if (!mayRead) error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
      else if (info === undefined || p.partitionIndex < 0 || p.partitionIndex >= info.numPartitions)
        error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
      else accepted.push(p)
      topicErrors.push(error)
    }
    errors.push(topicErrors)
    if (accepted.length < t.partitions.length || accepted.length === 0) allValid = false
    if (info !== undefined && accepted.length > 0) {
      valid.push({ name: info.name, topicId: topicIdOf(info.topicId), partitions: accepted })
    }
  }
  return { errors, valid, allValid }
}
