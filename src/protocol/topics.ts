/**
 * Kafka's internal topics (`org.apache.kafka.common.internals.Topic`): the coordinators' logs, which
 * the broker reports as internal in Metadata, guards against produce and DeleteRecords, and a Kafka
 * Streams topology may not use. The one list every folder reads.
 */

/** The group coordinator's log (offsets and group metadata). */
export const GROUP_METADATA_TOPIC_NAME = '__consumer_offsets'
/** The transaction coordinator's log. */
export const TRANSACTION_STATE_TOPIC_NAME = '__transaction_state'
/** The share coordinator's log. */
export const SHARE_GROUP_STATE_TOPIC_NAME = '__share_group_state'

const INTERNAL_TOPICS: ReadonlySet<string> = new Set([
  GROUP_METADATA_TOPIC_NAME,
  TRANSACTION_STATE_TOPIC_NAME,
  SHARE_GROUP_STATE_TOPIC_NAME,
])

/** Whether a topic is one of Kafka's internal topics (Kafka's `Topic.isInternal`). */
export function isInternalTopic(name: string): boolean {
  return INTERNAL_TOPICS.has(name)
}
