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
  /**
   * Per request topic and partition: its refusal, or null (or, for a topic whose every partition
   * passed, nothing at any index) when it goes to the coordinator.
   */
  readonly errors: (readonly (number | null)[])[]
  /** The partitions that passed, by topic, names resolved. */
  readonly valid: { name: string; topicId: string; partitions: readonly OffsetCommitPartitionInput[] }[]
  /** Every partition passed: `valid` has every request topic, in order, with all its partitions. */
  readonly allValid: boolean
}

/** The refusals of a topic whose every partition passed: none at any index. */
const NONE_REFUSED: readonly (number | null)[] = Object.freeze([])

/**
 * `topicIdOf` gives the topic id kept with the offsets of a topic that passed (OffsetCommit keeps
 * none below v10; TxnOffsetCommit takes it from the catalog at every version, as Kafka does).
 *
 * A topic whose every partition passes (a Kafka Streams commit of 20 partitions, nearly always)
 * hands the request's own partitions on and gets no list of refusals: the two lists built per
 * partition were about a tenth of what such a commit allocated.
 */
export function checkCommitTopics(
  ctx: RequestContext,
  topics: readonly CommitTopic[],
  useTopicIds: boolean,
  topicIdOf: (catalogTopicId: string) => string,
): CheckedCommitTopics {
  const { server } = ctx
  const errors: (readonly (number | null)[])[] = []
  const valid: CheckedCommitTopics['valid'] = []
  let allValid = true
  for (const t of topics) {
    const info = useTopicIds ? server.topics.byId(t.topicId) : server.topics.byName(t.name)
    const name = useTopicIds ? info?.name : t.name
    const mayRead = name !== undefined && server.authorizer.authorize(ctx.principal, 'READ', 'TOPIC', name)
    const partitions = t.partitions
    /** Set from the first refused partition on. */
    let refused: (number | null)[] | undefined
    let accepted: readonly OffsetCommitPartitionInput[] = partitions
    for (let pi = 0; pi < partitions.length; pi++) {
      const p = partitions[pi]
      let error: number | null = null
      if (name === undefined) error = ErrorCode.UNKNOWN_TOPIC_ID
      else if (!mayRead) error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
      else if (info === undefined || p.partitionIndex < 0 || p.partitionIndex >= info.numPartitions)
        error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
      if (refused === undefined) {
        if (error === null) continue
        // The first refusal: every partition before it passed.
        refused = new Array<number | null>(pi).fill(null)
        accepted = partitions.slice(0, pi)
      }
      refused.push(error)
      if (error === null) (accepted as OffsetCommitPartitionInput[]).push(p)
    }
    errors.push(refused ?? NONE_REFUSED)
    if (accepted.length < partitions.length || accepted.length === 0) allValid = false
    if (info !== undefined && accepted.length > 0) {
      valid.push({ name: info.name, topicId: topicIdOf(info.topicId), partitions: accepted })
    }
  }
  return { errors, valid, allValid }
}
