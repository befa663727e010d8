/**
 * Where the console gets its groups and topics from. The production source is the admin client
 * (`topograph/admin`) against any cluster; tests of the UI may inject another implementation of the
 * same interface to produce states a cluster cannot be made to show on demand.
 */
import {
  type Admin,
  type ClassicGroupDescription,
  type ConsumerGroupDescription,
  type GroupListing,
  OffsetSpec,
  type StreamsGroupDescription,
} from '../clients/admin/index.js'

export type DescribeOutcome = { readonly value: StreamsGroupDescription } | { readonly error: Error }
export type ConsumerDescribeOutcome = { readonly value: ConsumerGroupDescription } | { readonly error: Error }
export type ClassicDescribeOutcome = { readonly value: ClassicGroupDescription } | { readonly error: Error }

/** The log start and end offsets of one partition; null where that partition's ListOffsets failed. */
export interface PartitionOffsets {
  readonly partition: number
  readonly logStartOffset: number | null
  readonly logEndOffset: number | null
}

/** A topic's partitions with their offsets, or the error describing the topic failed with. */
export type TopicOffsetsOutcome =
  | { readonly topic: string; readonly partitions: readonly PartitionOffsets[] }
  | { readonly topic: string; readonly error: Error }

/** A group's committed offset for one partition. */
export interface CommittedOffset {
  readonly topic: string
  readonly partition: number
  readonly offset: number
}

/** A transaction that is open or completing, as its coordinator describes it. */
export interface OpenTransaction {
  readonly transactionalId: string
  readonly state: string
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly transactionTimeoutMs: number
  /** null when the coordinator reports no start time */
  readonly transactionStartTimeMs: number | null
  readonly topicPartitions: readonly { readonly topic: string; readonly partition: number }[]
}

/** One open transaction, or the error describing it failed with. */
export type OpenTransactionOutcome =
  | { readonly value: OpenTransaction }
  | { readonly transactionalId: string; readonly error: Error }

export interface ConsoleSource {
  /** Every streams group of the cluster. */
  listStreamsGroups(): Promise<readonly GroupListing[]>
  /** Each group described with its topology description; one outcome per requested id. */
  describeStreamsGroups(groupIds: readonly string[]): Promise<ReadonlyMap<string, DescribeOutcome>>
  /**
   * Every consumer group (KIP-848) and classic group of the cluster, each with its `groupType`.
   * Absent: the console shows none.
   */
  listConsumerGroups?(): Promise<readonly GroupListing[]>
  /** Each consumer group described; one outcome per requested id. */
  describeConsumerGroups?(groupIds: readonly string[]): Promise<ReadonlyMap<string, ConsumerDescribeOutcome>>
  /** Each classic group described (DescribeGroups); one outcome per requested id. */
  describeClassicGroups?(groupIds: readonly string[]): Promise<ReadonlyMap<string, ClassicDescribeOutcome>>
  /**
   * The partitions of topics (every topic when `topics` is null) with their log start and end
   * offsets, one outcome per topic, sorted by name. Absent: the console shows no offsets.
   */
  topicOffsets?(topics: readonly string[] | null): Promise<readonly TopicOffsetsOutcome[]>
  /** The size in bytes of every partition the cluster's log directories hold, keyed `topic-partition`. */
  logSizes?(): Promise<ReadonlyMap<string, number>>
  /** The offsets a group has committed. */
  committedOffsets?(groupId: string): Promise<readonly CommittedOffset[]>
  /** The transactions that are open or completing (Ongoing, PrepareCommit, PrepareAbort). */
  openTransactions?(): Promise<readonly OpenTransactionOutcome[]>
  close(): Promise<void>
}

export interface AdminSourceOptions {
  /** timeout of one admin call (10000): the console answers with an error rather than hang */
  readonly timeoutMs?: number
}

/** The admin-backed source. Closing it closes the admin client. */
export function adminConsoleSource(admin: Admin, opts: AdminSourceOptions = {}): ConsoleSource {
  const timeoutMs = opts.timeoutMs ?? 10_000
  const offsetOf = async (p: Promise<{ offset: bigint }>): Promise<number | null> => {
    try {
      return Number((await p).offset)
    } catch {
      return null
    }
  }
  return {
    listStreamsGroups: () => admin.listGroups({ types: ['streams'], timeoutMs }),
    describeStreamsGroups: async (groupIds) => {
      if (groupIds.length === 0) return new Map()
      const settled = await admin
        .describeStreamsGroups(groupIds, { includeTopologyDescription: true, timeoutMs })
        .settled()
      return new Map(
        [...settled].map(([k, v]): [string, DescribeOutcome] =>
          'value' in v ? [k, v] : [k, { error: v.error }],
        ),
      )
    },
    listConsumerGroups: () => admin.listGroups({ types: ['consumer', 'classic'], timeoutMs }),
    describeConsumerGroups: async (groupIds) => {
      if (groupIds.length === 0) return new Map()
      const settled = await admin.describeConsumerGroups(groupIds, { timeoutMs }).settled()
      return new Map(
        [...settled].map(([k, v]): [string, ConsumerDescribeOutcome] =>
          'value' in v ? [k, v] : [k, { error: v.error }],
        ),
      )
    },
    describeClassicGroups: async (groupIds) => {
      if (groupIds.length === 0) return new Map()
      return admin.describeClassicGroups(groupIds, { timeoutMs }).settled()
    },
    topicOffsets: async (topics) => {
      const names = [...new Set(topics ?? (await admin.listTopics({ timeoutMs })))].sort()
      if (names.length === 0) return []
      const described = await admin.describeTopics(names, { timeoutMs }).settled()
      const partitions = names.flatMap((topic) => {
        const d = described.get(topic)
        return d !== undefined && 'value' in d
          ? d.value.partitions.map((p) => ({ topic, partition: p.partition }))
          : []
      })
      const list = (spec: OffsetSpec) =>
        admin.listOffsets(
          partitions.map((tp) => ({ ...tp, spec })),
          { timeoutMs },
        )
      const earliest = partitions.length === 0 ? null : list(OffsetSpec.earliest())
      const latest = partitions.length === 0 ? null : list(OffsetSpec.latest())
      return Promise.all(
        names.map(async (topic): Promise<TopicOffsetsOutcome> => {
          const d = described.get(topic)
          if (d === undefined) return { topic, error: new Error(`No description of topic ${topic}`) }
          if ('error' in d) return { topic, error: d.error }
          return {
            topic,
            partitions: await Promise.all(
              d.value.partitions.map(async (p) => ({
                partition: p.partition,
                logStartOffset: await offsetOf(earliest!.partitionResult(topic, p.partition)),
                logEndOffset: await offsetOf(latest!.partitionResult(topic, p.partition)),
              })),
            ),
          }
        }),
      )
    },
    logSizes: async () => {
      const sizes = new Map<string, number>()
      for (const dirs of (await admin.describeLogDirs(undefined, { timeoutMs })).values()) {
        for (const dir of dirs) {
          for (const r of dir.replicas) {
            if (r.isFuture) continue
            const key = `${r.topic}-${r.partition}`
            sizes.set(key, (sizes.get(key) ?? 0) + r.size)
          }
        }
      }
      return sizes
    },
    committedOffsets: async (groupId) =>
      (await admin.listStreamsGroupOffsets(groupId, { timeoutMs }))
        .filter((o) => o.offset >= 0n)
        .map((o) => ({ topic: o.topic, partition: o.partition, offset: Number(o.offset) })),
    openTransactions: async () => {
      const listed = await admin.listTransactions({ filterStates: OPEN_STATES, timeoutMs })
      if (listed.length === 0) return []
      const ids = listed.map((t) => t.transactionalId)
      const described = await admin.describeTransactions(ids, { timeoutMs }).settled()
      return ids.map((transactionalId): OpenTransactionOutcome => {
        const d = described.get(transactionalId)
        if (d === undefined)
          return { transactionalId, error: new Error(`No description of ${transactionalId}`) }
        if ('error' in d) return { transactionalId, error: d.error }
        return { value: { transactionalId, ...d.value } }
      })
    },
    close: () => admin.close(),
  }
}

/** The states of a transaction that is open or on its way to its markers. */
const OPEN_STATES = ['Ongoing', 'PrepareCommit', 'PrepareAbort']
