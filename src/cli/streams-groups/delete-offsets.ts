/**
 * `kafka-streams-groups --delete-offsets`, as Kafka's StreamsGroupCommand.deleteOffsets: the
 * partitions of `--all-input-topics` (the group's committed source-topic partitions) or of each
 * `--input-topic` (`topic:p,q`, or every partition of a bare topic), one OffsetDelete, a summary
 * line for the top-level outcome, then Kafka's TOPIC/PARTITION/STATUS table sorted by topic and
 * partition (as one string). A bare topic that cannot be described is a row with partition `-`.
 */
import type { TopicPartition } from '../../clients/admin/index.js'
import { javaHashOrder, javaStringHash, topicPartitionHash } from '../../java-order.js'
import { KafkaError } from '../../clients/network/errors.js'
import { ErrorCode, errorInfo } from '../../protocol/errors.js'
import { type CommandContext, javaToString, printError } from './io.js'
import { inputTopicOffsets } from './group-topics.js'
import { OffsetsResetter, distinct, tpKey } from './offsets-resetter.js'

interface Row extends TopicPartition {
  /** null: deleted; otherwise the ExecutionException's message (the cause's `toString()`) */
  readonly error: string | null
}

/** Kafka's Errors.forException for an admin failure: its code, REQUEST_TIMED_OUT, or UNKNOWN_SERVER_ERROR. */
function errorCodeOf(e: unknown): number {
  if (e instanceof KafkaError) {
    if (e.code !== null) return e.code
    if (e.errorName === 'REQUEST_TIMED_OUT') return ErrorCode.REQUEST_TIMED_OUT
  }
  return ErrorCode.UNKNOWN_SERVER_ERROR
}

/** Deletes and prints; returns the top-level error name and the rows (for tests). */
export async function deleteOffsets(ctx: CommandContext): Promise<{ topLevel: string; rows: Row[] }> {
  const groupId = ctx.o.valuesOf('group')[0]!
  const rows: Row[] = []
  let partitions: TopicPartition[]
  if (ctx.o.has('all-input-topics')) {
    partitions = [...(await inputTopicOffsets(ctx, groupId)).values()].map((o) => ({
      topic: o.topic,
      partition: o.partition,
    }))
  } else {
    const topics = [...new Set(ctx.o.valuesOf('input-topic'))]
    const withPartitions = javaHashOrder(
      topics.filter((t) => t.includes(':')),
      javaStringHash,
    )
    const bare = javaHashOrder(
      topics.filter((t) => !t.includes(':')),
      javaStringHash,
    )
    const resetter = new OffsetsResetter(ctx, { toOffset: null, shiftBy: null })
    partitions = withPartitions.flatMap((t) => resetter.parseTopicsWithPartitions(t))
    if (bare.length > 0) {
      const described = await ctx.admin.describeTopics(bare, { timeoutMs: ctx.timeoutMs }).settled()
      for (const topic of bare) {
        const r = described.get(topic)!
        if ('error' in r) rows.push({ topic, partition: -1, error: javaToString(r.error) })
        else for (const p of r.value.partitions) partitions.push({ topic, partition: p.partition })
      }
    }
  }
  // Kafka asks for a HashSet of partitions.
  partitions = javaHashOrder(distinct(partitions), (tp) => topicPartitionHash(tp.topic, tp.partition))
  const result = ctx.admin.deleteStreamsGroupOffsets(groupId, partitions, { timeoutMs: ctx.timeoutMs })
  let topLevelCode: number = ErrorCode.NONE
  try {
    await result.all()
  } catch (e) {
    topLevelCode = errorCodeOf(e)
  }
  const topLevel = errorInfo(topLevelCode).name
  for (const tp of partitions) {
    try {
      await result.partitionResult(tp.topic, tp.partition)
      rows.push({ ...tp, error: null })
    } catch (e) {
      rows.push({ ...tp, error: javaToString(e) })
    }
  }

  switch (topLevel) {
    case 'NONE':
      ctx.io.out(`Request succeeded for deleting offsets from group ${groupId}.\n`)
      break
    case 'INVALID_GROUP_ID':
    case 'GROUP_ID_NOT_FOUND':
    case 'GROUP_AUTHORIZATION_FAILED':
    case 'NON_EMPTY_GROUP':
      printError(ctx.io, errorInfo(topLevelCode).message ?? topLevel)
      break
    case 'GROUP_SUBSCRIBED_TO_TOPIC':
    case 'TOPIC_AUTHORIZATION_FAILED':
    case 'UNKNOWN_TOPIC_OR_PARTITION':
      printError(ctx.io, 'Encountered some partition-level error, see the follow-up details.')
      break
    default:
      printError(ctx.io, `Encountered some unknown error: ${topLevel}`)
  }

  // One row per partition (the last outcome wins, as in Kafka's map), sorted by topic + partition.
  const byKey = new Map<string, Row>()
  for (const r of rows) byKey.set(tpKey(r.topic, r.partition), r)
  const sorted = [...byKey.values()].sort((a, b) => {
    const x = `${a.topic}${a.partition}`
    const y = `${b.topic}${b.partition}`
    return x < y ? -1 : x > y ? 1 : 0
  })
  const tl = Math.max(15, ...sorted.map((r) => r.topic.length))
  const line = (t: string, p: string | number, s: string): string =>
    `\n${t.padEnd(tl)} ${String(p).padEnd(10)} ${s.padEnd(15)}`
  let out = line('TOPIC', 'PARTITION', 'STATUS')
  for (const r of sorted) {
    out += line(
      r.topic,
      r.partition >= 0 ? r.partition : '-',
      r.error === null ? 'Successful' : `Error: ${r.error}`,
    )
  }
  ctx.io.out(`${out}\n`)
  return { topLevel, rows: sorted }
}
