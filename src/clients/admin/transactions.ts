/**
 * Transactions and producers in the admin client, as Kafka's Admin answers them:
 * `describeTransactions` (DescribeTransactions, asked of each id's transaction coordinator, found
 * with FindCoordinator key type 1), `listTransactions` (ListTransactions, asked of every broker,
 * the listings put together) and `describeProducers` (DescribeProducers, asked of each partition's
 * leader: the producers with state in the partition).
 */
import type { NetworkClient } from '../network/client.js'
import { isCoordinatorError, KafkaError, kafkaErrorFromCode } from '../network/errors.js'
import { topicsMetadata } from './metadata.js'
import type { TopicPartition } from './offsets.js'

const TRANSACTION_KEY_TYPE = 1

/** Kafka's `TransactionDescription`. */
export interface TransactionDescription {
  readonly coordinatorId: number
  /** Kafka's state name: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, … */
  readonly state: string
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly transactionTimeoutMs: number
  /** null when no transaction is open (the broker sends -1) */
  readonly transactionStartTimeMs: number | null
  /** by topic, then partition */
  readonly topicPartitions: readonly TopicPartition[]
}

/** Kafka's `TransactionListing`. */
export interface TransactionListing {
  readonly transactionalId: string
  readonly producerId: bigint
  readonly state: string
}

export interface ListTransactionsFilters {
  /** only these states (Kafka's names); empty or absent: every state */
  readonly filterStates?: readonly string[]
  readonly filterProducerIds?: readonly bigint[]
  /** only transactions running for longer than this many milliseconds (ListTransactions v1+) */
  readonly filterOnDuration?: number
  /** only ids matching this regular expression, whole (ListTransactions v2+) */
  readonly filterOnTransactionalIdPattern?: string
}

/** Kafka's `ProducerState`: one producer with state in a partition. */
export interface ProducerState {
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly lastSequence: number
  readonly lastTimestamp: number
  /** null when no marker was written for the producer (-1) */
  readonly coordinatorEpoch: number | null
  /** the first offset of its open transaction, null when none (-1) */
  readonly currentTransactionStartOffset: number | null
}

const byTopicPartition = (a: TopicPartition, b: TopicPartition): number =>
  a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition

/** Describes transactional ids, each at its coordinator; each id's promise settles on its own. */
export function describeTransactions(
  client: NetworkClient,
  transactionalIds: readonly string[],
  deadline: number,
): Map<string, Promise<TransactionDescription>> {
  const out = new Map<string, Promise<TransactionDescription>>()
  for (const id of transactionalIds) {
    if (out.has(id)) continue
    const p = client.withRetries(
      async () => {
        const node = await client.findCoordinator(id, TRANSACTION_KEY_TYPE)
        try {
          const res = await client.sendTo(node, 65, { transactionalIds: [id] })
          const s = res.transactionStates.find((x) => x.transactionalId === id) ?? res.transactionStates[0]
          if (s === undefined) throw new KafkaError(`No answer for transactional id ${id}`)
          if (s.errorCode !== 0) throw kafkaErrorFromCode(s.errorCode)
          return {
            coordinatorId: node.nodeId,
            state: s.transactionState,
            producerId: s.producerId,
            producerEpoch: s.producerEpoch,
            transactionTimeoutMs: s.transactionTimeoutMs,
            transactionStartTimeMs: s.transactionStartTimeMs < 0n ? null : Number(s.transactionStartTimeMs),
            topicPartitions: s.topics
              .flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })))
              .sort(byTopicPartition),
          }
        } catch (e) {
          if (isCoordinatorError(e)) client.markCoordinatorUnknown(id, TRANSACTION_KEY_TYPE)
          throw e
        }
      },
      { deadline, operation: 'describeTransactions' },
    )
    p.catch(() => undefined)
    out.set(id, p)
  }
  return out
}

/** Lists the transactions of every broker (ListTransactions), sorted by transactional id. */
export async function listTransactions(
  client: NetworkClient,
  filters: ListTransactionsFilters,
  deadline: number,
): Promise<TransactionListing[]> {
  const md = await client.withRetries(() => client.metadata([]), { deadline, operation: 'listTransactions' })
  const out: TransactionListing[] = []
  for (const b of md.brokers) {
    const listed = await client.withRetries(
      async () => {
        const conn = await client.connect(b.host, b.port)
        const version = conn.negotiateVersion(66)
        if (filters.filterOnDuration !== undefined && version < 1)
          throw new KafkaError('The broker cannot filter transactions by duration (ListTransactions v1).')
        if (filters.filterOnTransactionalIdPattern !== undefined && version < 2)
          throw new KafkaError('The broker cannot filter transactional ids by pattern (ListTransactions v2).')
        const r = await conn.send(
          66,
          {
            stateFilters: [...(filters.filterStates ?? [])],
            producerIdFilters: [...(filters.filterProducerIds ?? [])],
            durationFilter: BigInt(filters.filterOnDuration ?? -1),
            transactionalIdPattern: filters.filterOnTransactionalIdPattern ?? null,
          },
          { version },
        )
        if (r.errorCode !== 0) throw kafkaErrorFromCode(r.errorCode)
        return r.transactionStates
      },
      { deadline, operation: 'listTransactions' },
    )
    for (const t of listed)
      out.push({ transactionalId: t.transactionalId, producerId: t.producerId, state: t.transactionState })
  }
  return out.sort((x, y) =>
    x.transactionalId < y.transactionalId ? -1 : x.transactionalId > y.transactionalId ? 1 : 0,
  )
}

/**
 * The producers with state in each partition, asked of its leader. Keyed by `topic-partition`; each
 * key fails with the partition's error.
 */
export function describeProducers(
  client: NetworkClient,
  partitions: readonly TopicPartition[],
  deadline: number,
): Map<string, Promise<ProducerState[]>> {
  const key = (p: TopicPartition): string => `${p.topic}-${p.partition}`
  const settled = client.withRetries(
    async () => {
      const topics = [...new Set(partitions.map((p) => p.topic))]
      const { response, brokers } = await topicsMetadata(client, topics)
      const answers = new Map<string, { producers: ProducerState[] } | { error: KafkaError }>()
      const byLeader = new Map<number, TopicPartition[]>()
      for (const p of partitions) {
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
          const byTopic = new Map<string, number[]>()
          for (const p of ps) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition])
          const res = await client.sendTo(node, 61, {
            topics: [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
          })
          for (const t of res.topics)
            for (const p of t.partitions)
              answers.set(
                `${t.name}-${p.partitionIndex}`,
                p.errorCode !== 0
                  ? { error: kafkaErrorFromCode(p.errorCode) }
                  : {
                      producers: p.activeProducers.map((s) => ({
                        producerId: s.producerId,
                        producerEpoch: s.producerEpoch,
                        lastSequence: s.lastSequence,
                        lastTimestamp: Number(s.lastTimestamp),
                        coordinatorEpoch: s.coordinatorEpoch < 0 ? null : s.coordinatorEpoch,
                        currentTransactionStartOffset:
                          s.currentTxnStartOffset < 0n ? null : Number(s.currentTxnStartOffset),
                      })),
                    },
              )
        }),
      )
      return answers
    },
    { deadline, operation: 'describeProducers' },
  )
  const out = new Map<string, Promise<ProducerState[]>>()
  for (const p of partitions) {
    const k = key(p)
    if (out.has(k)) continue
    const promise = settled.then((answers) => {
      const a = answers.get(k)
      if (a === undefined) throw new KafkaError(`No answer for ${k}`)
      if ('error' in a) throw a.error
      return a.producers
    })
    promise.catch(() => undefined)
    out.set(k, promise)
  }
  return out
}
