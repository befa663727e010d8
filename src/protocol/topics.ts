/**
 * Kafka's topic names (`org.apache.kafka.common.internals.Topic`): the rule every topic name must
 * pass, and the internal topics (the coordinators' logs), which the broker reports as internal in
 * Metadata, guards against produce and DeleteRecords, and a Kafka Streams topology may not use. The
 * one rule and the one list every folder reads.
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

/** The longest legal topic name (Kafka's `Topic.MAX_NAME_LENGTH`), in UTF-16 code units as Java counts. */
const MAX_NAME_LENGTH = 249
/** ASCII alphanumerics, '.', '_' and '-' (Kafka's `Topic.LEGAL_CHARS`). */
const LEGAL_NAME = /^[a-zA-Z0-9._-]+$/

/**
 * Kafka's topic-name rule (`Topic.detectInvalidTopic`): the reason a name is illegal, in Kafka's
 * words and order, or null when it is legal.
 */
export function invalidTopicNameReason(name: string): string | null {
  if (name.length === 0) return 'the empty string is not allowed'
  if (name === '.') return "'.' is not allowed"
  if (name === '..') return "'..' is not allowed"
  if (name.length > MAX_NAME_LENGTH) {
    return `the length of '${name}' is longer than the max allowed length ${MAX_NAME_LENGTH}`
  }
  if (!LEGAL_NAME.test(name)) {
    return `'${name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'`
  }
  return null
}

/** Whether a topic name is legal (Kafka's `Topic.isValid`). */
export function isValidTopicName(name: string): boolean {
  return invalidTopicNameReason(name) === null
}
