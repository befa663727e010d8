/**
 * The console's HTTP JSON API (docs/console.md). The browser bundle imports these types only.
 */
import type {
  ClassicGroupDescription,
  ConsumerGroupDescription,
  StreamsGroupDescription,
  StreamsGroupTopologyDescription,
  StreamsGroupTopologyDescriptionStatus,
} from '../clients/admin/index.js'

/** A failure the API reports: Kafka's error name (`GROUP_ID_NOT_FOUND`) or a local one. */
export interface ApiError {
  readonly errorName: string
  readonly message: string
}

/** One row of `GET /api/groups`. The numbers are null when the group could not be described. */
export interface GroupSummary {
  readonly groupId: string
  readonly groupState: string | null
  readonly groupEpoch: number | null
  readonly topologyEpoch: number | null
  readonly memberCount: number | null
  readonly topologyDescriptionStatus: StreamsGroupTopologyDescriptionStatus | null
  readonly error: ApiError | null
}

export interface GroupsResponse {
  readonly groups: readonly GroupSummary[]
  /** ISO-8601 time of the answer */
  readonly fetchedAt: string
}

/**
 * The description the console draws for a group. `current` is false when the coordinator has no
 * description for the group's topology epoch and this is the last one the console saw, for an older
 * epoch: the drawing is then flagged as not matching the group.
 */
export interface ShownDescription {
  readonly topologyEpoch: number
  readonly current: boolean
  readonly description: StreamsGroupTopologyDescription
}

/**
 * One partition a group reads (a source or repartition source topic of its topology, or any
 * partition it has committed an offset for): the committed offset, the partition's log start and
 * end offsets and the lag, as `kafka-streams-groups --describe --offsets` computes it (end −
 * committed, or end − log start when nothing is committed).
 */
export interface PartitionLag {
  readonly topic: string
  readonly partition: number
  /** null when the group has committed nothing for the partition */
  readonly committedOffset: number | null
  readonly logStartOffset: number | null
  readonly logEndOffset: number | null
  /** null when the end offset could not be read */
  readonly lag: number | null
}

/**
 * Why a `NotReady` streams group is not ready, as far as its topics tell. StreamsGroupDescribe does
 * not carry the reason (only the heartbeat's status does), so the console checks the topics the
 * described topology needs, as the coordinator does before it assigns tasks.
 */
export interface GroupReadiness {
  /** source topics of the topology that do not exist */
  readonly missingSourceTopics: readonly string[]
  /** repartition and changelog topics that do not exist (yet: the coordinator creates them) */
  readonly missingInternalTopics: readonly string[]
  /** internal topics whose partition count is not the one the topology asks for */
  readonly incorrectlyPartitionedTopics: readonly {
    readonly topic: string
    readonly expected: number
    readonly actual: number
  }[]
  /** null, or why the topics could not be checked (the lists are then empty) */
  readonly error: ApiError | null
}

/** `GET /api/groups/{groupId}` */
export interface GroupResponse {
  readonly group: StreamsGroupDescription
  /** for a `NotReady` group, what its topics say about why; null in any other state */
  readonly readiness: GroupReadiness | null
  readonly shownDescription: ShownDescription | null
  /** per partition, sorted by topic and partition; null when the offsets could not be read */
  readonly offsets: readonly PartitionLag[] | null
  /** why `offsets` is null */
  readonly offsetsError: ApiError | null
  readonly fetchedAt: string
}

/** One partition of `GET /api/topics`. Offsets are null when that partition's ListOffsets failed. */
export interface TopicPartitionSummary {
  readonly partition: number
  readonly logStartOffset: number | null
  readonly logEndOffset: number | null
  /** bytes of the partition's log (DescribeLogDirs); null when no log directory reports it */
  readonly size: number | null
}

/** One topic of `GET /api/topics`: its partitions, or the error describing it failed with. */
export interface TopicSummary {
  readonly name: string
  readonly partitions: readonly TopicPartitionSummary[]
  readonly error: ApiError | null
}

/** `GET /api/topics`: every topic, sorted by name. */
export interface TopicsResponse {
  readonly topics: readonly TopicSummary[]
  /** why sizes are missing (DescribeLogDirs failed or is not served), null when they are there */
  readonly sizesError: ApiError | null
  readonly fetchedAt: string
}

/** One transaction of `GET /api/transactions`. */
export interface TransactionSummary {
  readonly transactionalId: string
  /** Ongoing, PrepareCommit or PrepareAbort; "" when it could not be described */
  readonly state: string
  /** decimal text (an int64) */
  readonly producerId: string
  readonly producerEpoch: number
  readonly transactionTimeoutMs: number
  /** ISO time the transaction started, null when unknown */
  readonly startedAt: string | null
  /** milliseconds since it started at the time of `fetchedAt`, null when unknown */
  readonly ageMs: number | null
  readonly partitions: readonly { readonly topic: string; readonly partition: number }[]
  readonly error: ApiError | null
}

/** `GET /api/transactions`: the open transactions, oldest first. */
export interface TransactionsResponse {
  readonly transactions: readonly TransactionSummary[]
  readonly fetchedAt: string
}

/** `GET /api/groups/{groupId}/topology-description.json` */
export interface DescriptionDownload {
  readonly groupId: string
  readonly topologyEpoch: number
  readonly current: boolean
  readonly topologyDescription: StreamsGroupTopologyDescription
}

/**
 * One row of `GET /api/consumer-groups`: a consumer group (KIP-848) or a classic group. The numbers
 * are null when the group could not be described; a classic group has no group epoch, and its
 * assignor is the protocol it chose (null when it has none, as a group with offsets only).
 */
export interface ConsumerGroupSummary {
  readonly groupId: string
  /** `consumer` or `classic` */
  readonly groupType: string
  readonly groupState: string | null
  readonly groupEpoch: number | null
  readonly assignorName: string | null
  readonly memberCount: number | null
  readonly error: ApiError | null
}

/** `GET /api/consumer-groups`: the consumer groups (KIP-848) and classic groups, sorted by id. */
export interface ConsumerGroupsResponse {
  readonly groups: readonly ConsumerGroupSummary[]
  readonly fetchedAt: string
}

/** A partition's lag in a consumer group, with the member that owns it (null: none). */
export interface ConsumerPartitionLag extends PartitionLag {
  readonly memberId: string | null
}

interface ConsumerGroupPage {
  /**
   * Every partition of the topics the group subscribes to, is assigned or has committed for, sorted
   * by topic and partition; null when the offsets could not be read
   */
  readonly offsets: readonly ConsumerPartitionLag[] | null
  /** why `offsets` is null */
  readonly offsetsError: ApiError | null
  readonly fetchedAt: string
}

/** `GET /api/consumer-groups/{groupId}`: a consumer group (KIP-848) or a classic group. */
export type ConsumerGroupResponse =
  | (ConsumerGroupPage & { readonly groupType: 'consumer'; readonly group: ConsumerGroupDescription })
  | (ConsumerGroupPage & { readonly groupType: 'classic'; readonly group: ClassicGroupDescription })
