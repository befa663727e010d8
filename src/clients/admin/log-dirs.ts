/**
 * Log directories and records in the admin client, as Kafka's Admin answers them:
 * `describeLogDirs` (DescribeLogDirs, asked of each broker: every log directory with the size of
 * each partition it holds) and `deleteRecords` (DeleteRecords, asked of each partition's leader:
 * moves the log start offset, answering the new low watermark per partition).
 */
import type { BrokerNode, NetworkClient } from '../network/client.js'
import { KafkaError, kafkaErrorFromCode } from '../network/errors.js'
import { topicsMetadata } from './metadata.js'
import type { TopicPartition } from './offsets.js'

/** One partition held by a log directory (Kafka's `ReplicaInfo`). */
export interface ReplicaInfo {
  readonly topic: string
  readonly partition: number
  /** bytes of the partition's log */
  readonly size: number
  /** how far a future replica is behind (0 on a leader) */
  readonly offsetLag: number
  readonly isFuture: boolean
}

/** One log directory of a broker (Kafka's `LogDirDescription`). */
export interface LogDirDescription {
  /** the directory's absolute path */
  readonly path: string
  /** the directory's error (KAFKA_STORAGE_ERROR when offline), null when none */
  readonly error: KafkaError | null
  /** file-system size and free space; null when the broker does not tell (DescribeLogDirs < v4) */
  readonly totalBytes: number | null
  readonly usableBytes: number | null
  /** by topic, then partition */
  readonly replicas: readonly ReplicaInfo[]
}

/** A partition and the offset before which its records are to be deleted (-1: the high watermark). */
export interface RecordsToDelete extends TopicPartition {
  readonly offset: number
}

const byTopicPartition = (a: TopicPartition, b: TopicPartition): number =>
  a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition

/** Asks each broker (every broker of the cluster when `brokerIds` is null) for its log directories. */
export async function describeLogDirs(
  client: NetworkClient,
  brokerIds: readonly number[] | null,
  deadline: number,
): Promise<Map<number, LogDirDescription[]>> {
  const md = await client.withRetries(() => client.metadata([]), { deadline, operation: 'describeLogDirs' })
  const brokers = new Map<number, BrokerNode>(md.brokers.map((b) => [b.nodeId, b]))
  const ids = brokerIds ?? [...brokers.keys()].sort((a, b) => a - b)
  const out = new Map<number, LogDirDescription[]>()
  await Promise.all(
    ids.map(async (id) => {
      const node = brokers.get(id)
      if (node === undefined) throw new KafkaError(`Broker ${id} is not in the cluster's metadata.`)
      const res = await client.withRetries(
        async () => {
          const conn = await client.connect(node.host, node.port)
          const version = conn.negotiateVersion(35)
          const r = await conn.send(35, { topics: null }, { version })
          if (r.errorCode !== 0) throw kafkaErrorFromCode(r.errorCode)
          return { r, version }
        },
        { deadline, operation: 'describeLogDirs' },
      )
      out.set(
        id,
        res.r.results.map((d) => ({
          path: d.logDir,
          error: d.errorCode === 0 ? null : kafkaErrorFromCode(d.errorCode),
          totalBytes: res.version >= 4 && d.totalBytes >= 0n ? Number(d.totalBytes) : null,
          usableBytes: res.version >= 4 && d.usableBytes >= 0n ? Number(d.usableBytes) : null,
          replicas: d.topics
            .flatMap((t) =>
              t.partitions.map((p) => ({
                topic: t.name,
                partition: p.partitionIndex,
                size: Number(p.partitionSize),
                offsetLag: Number(p.offsetLag),
                isFuture: p.isFutureKey,
              })),
            )
            .sort(byTopicPartition),
        })),
      )
    }),
  )
  return out
}

/**
 * Deletes records before the given offsets. Each partition's promise resolves with its new low
 * watermark (log start offset) or fails with the partition's error.
 */
export function deleteRecords(
  client: NetworkClient,
  partitions: readonly RecordsToDelete[],
  deadline: number,
  timeoutMs: number,
): Map<string, Promise<number>> {
  const key = (p: TopicPartition): string => `${p.topic}-${p.partition}`
  const results = new Map<string, Promise<number>>()
  const requested = new Map(partitions.map((p) => [key(p), p]))
  const settled = client.withRetries(
    async () => {
      const topics = [...new Set(partitions.map((p) => p.topic))]
      const { response, brokers } = await topicsMetadata(client, topics)
      const byLeader = new Map<number, RecordsToDelete[]>()
      const answers = new Map<string, { lowWatermark: number } | { error: KafkaError }>()
      for (const p of requested.values()) {
        const t = response.topics.find((x) => x.name === p.topic)
        const part = t?.partitions.find((x) => x.partitionIndex === p.partition)
        if (t === undefined || t.errorCode !== 0 || part === undefined) {
          answers.set(key(p), { error: kafkaErrorFromCode(t?.errorCode || 3) })
          continue
        }
        byLeader.set(part.leaderId, [...(byLeader.get(part.leaderId) ?? []), p])
      }
      await Promise.all(
        [...byLeader].map(async ([leaderId, ps]) => {
          const node = brokers.get(leaderId)
          if (node === undefined) throw new KafkaError(`No leader for ${key(ps[0]!)}`, { retriable: true })
          const byTopic = new Map<string, RecordsToDelete[]>()
          for (const p of ps) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p])
          const res = await client.sendTo(node, 21, {
            topics: [...byTopic].map(([name, tps]) => ({
              name,
              partitions: tps.map((p) => ({ partitionIndex: p.partition, offset: BigInt(p.offset) })),
            })),
            timeoutMs,
          })
          for (const t of res.topics)
            for (const p of t.partitions)
              answers.set(
                `${t.name}-${p.partitionIndex}`,
                p.errorCode === 0
                  ? { lowWatermark: Number(p.lowWatermark) }
                  : { error: kafkaErrorFromCode(p.errorCode) },
              )
        }),
      )
      return answers
    },
    { deadline, operation: 'deleteRecords' },
  )
  for (const k of requested.keys()) {
    const p = settled.then((answers) => {
      const a = answers.get(k)
      if (a === undefined) throw new KafkaError(`The response did not mention partition ${k}`)
      if ('error' in a) throw a.error
      return a.lowWatermark
    })
    p.catch(() => undefined)
    results.set(k, p)
  }
  return results
}
