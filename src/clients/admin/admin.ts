/**
 * The admin client (`topograph/admin`): group listing, streams group description (with the
 * KIP-1331 topology description), consumer group description (KIP-848), group deletion with the DeleteGroups v3 per-group message,
 * committed offsets, topic creation and listing, and config resources (describe and incremental
 * alteration).
 */
import type { StreamsGroupDescribeResponseDescribedGroup } from '../../protocol/generated/messages/StreamsGroupDescribeResponse.js'
import { type BrokerNode, NetworkClient, type NetworkClientOptions } from '../network/client.js'
import { IllegalStateError, KafkaError, kafkaErrorFromCode, TimeoutError } from '../network/errors.js'
import {
  type AlterConfigOp,
  type AlterConfigsOptions,
  type Config,
  type ConfigResource,
  type ConfigResourceResult,
  type DescribeConfigsOptions,
  describeConfigs,
  incrementalAlterConfigs,
} from './configs.js'
import {
  type AlterOffsetsResult,
  alterGroupOffsets,
  type DeleteOffsetsResult,
  deleteGroupOffsets,
  type ListOffsetsOptions,
  type ListOffsetsQuery,
  type ListOffsetsResult,
  listOffsets,
  type OffsetAndMetadata,
  type TopicPartition,
} from './offsets.js'
import { deleteTopics, describeTopics, type TopicDescription } from './topics.js'
import {
  type ClassicGroupDescription,
  classicGroupFromWire,
  type ConsumerGroupDescription,
  consumerGroupFromWire,
  type DescribeConsumerGroupsOptions,
  isConsumerProtocolType,
} from './consumer-groups.js'
import { deleteRecords, describeLogDirs, type LogDirDescription, type RecordsToDelete } from './log-dirs.js'
import {
  type StreamsGroupTopologyDescription,
  type StreamsGroupTopologyDescriptionStatus,
  topologyDescriptionFromWire,
  topologyDescriptionStatusForId,
} from './topology-description.js'
import {
  describeProducers,
  describeTransactions,
  type ListTransactionsFilters,
  listTransactions,
  type ProducerState,
  type TransactionDescription,
  type TransactionListing,
} from './transactions.js'

export interface AdminOptions extends NetworkClientOptions {
  /** default.api.timeout.ms for calls without their own timeout (60000) */
  readonly defaultApiTimeoutMs?: number
}

export interface CallOptions {
  readonly timeoutMs?: number
}

export interface GroupListing {
  readonly groupId: string
  readonly protocolType: string
  /** null when the broker is too old to report it */
  readonly groupState: string | null
  readonly groupType: string | null
}

export interface ListGroupsOptions extends CallOptions {
  /** group types (`streams`, `consumer`, `classic`, `share`); case-insensitive */
  readonly types?: readonly string[]
  /** group states (`Stable`, `Empty`, …); case-insensitive */
  readonly states?: readonly string[]
}

export interface TaskIds {
  readonly subtopologyId: string
  readonly partitions: readonly number[]
}
export interface StreamsGroupMemberAssignment {
  readonly activeTasks: readonly TaskIds[]
  readonly standbyTasks: readonly TaskIds[]
  readonly warmupTasks: readonly TaskIds[]
}
export interface StreamsGroupMemberDescription {
  readonly memberId: string
  readonly memberEpoch: number
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly clientId: string
  readonly clientHost: string
  readonly topologyEpoch: number
  readonly processId: string
  readonly userEndpoint: { readonly host: string; readonly port: number } | null
  readonly clientTags: Readonly<Record<string, string>>
  readonly assignment: StreamsGroupMemberAssignment
  readonly targetAssignment: StreamsGroupMemberAssignment
  readonly isClassic: boolean
}
export interface StreamsGroupTopicInfo {
  readonly name: string
  readonly partitions: number
  readonly replicationFactor: number
  readonly topicConfigs: Readonly<Record<string, string>>
}
export interface StreamsGroupSubtopologyDescription {
  readonly subtopologyId: string
  readonly sourceTopics: readonly string[]
  readonly repartitionSinkTopics: readonly string[]
  readonly stateChangelogTopics: readonly StreamsGroupTopicInfo[]
  readonly repartitionSourceTopics: readonly StreamsGroupTopicInfo[]
}
export interface StreamsGroupDescription {
  readonly groupId: string
  readonly groupEpoch: number
  readonly targetAssignmentEpoch: number
  readonly topologyEpoch: number
  readonly subtopologies: readonly StreamsGroupSubtopologyDescription[]
  readonly members: readonly StreamsGroupMemberDescription[]
  readonly groupState: string
  readonly coordinator: BrokerNode
  /** null unless includeAuthorizedOperations was set and the broker answered */
  readonly authorizedOperations: number | null
  /** present iff the status is AVAILABLE */
  readonly topologyDescription: StreamsGroupTopologyDescription | null
  readonly topologyDescriptionStatus: StreamsGroupTopologyDescriptionStatus
  readonly assignorName: string | null
}

export interface DescribeStreamsGroupsOptions extends CallOptions {
  readonly includeTopologyDescription?: boolean
  readonly includeAuthorizedOperations?: boolean
}

/** Per-key results: each promise settles on its own; `all()` fails on the first failure. */
export class KeyedResult<T> {
  readonly #byKey: ReadonlyMap<string, Promise<T>>

  constructor(byKey: ReadonlyMap<string, Promise<T>>) {
    // A caller that only awaits `all()` must not see unhandled rejections for the other keys.
    for (const p of byKey.values()) p.catch(() => undefined)
    this.#byKey = byKey
  }

  get(key: string): Promise<T> {
    const p = this.#byKey.get(key)
    if (p === undefined) return Promise.reject(new KafkaError(`No result for ${key}`))
    return p
  }

  get keys(): string[] {
    return [...this.#byKey.keys()]
  }

  /** Every value, by key, in request order; rejects with the first failure in request order. */
  async all(): Promise<Map<string, T>> {
    const out = new Map<string, T>()
    for (const [k, p] of this.#byKey) out.set(k, await p)
    return out
  }

  /** Every outcome without throwing. */
  async settled(): Promise<Map<string, { value: T } | { error: KafkaError }>> {
    const out = new Map<string, { value: T } | { error: KafkaError }>()
    for (const [k, p] of this.#byKey) {
      try {
        out.set(k, { value: await p })
      } catch (e) {
        out.set(k, { error: e instanceof KafkaError ? e : new KafkaError(String(e), { cause: e }) })
      }
    }
    return out
  }
}

export interface TopicPartitionOffset {
  readonly topic: string
  readonly partition: number
  readonly offset: bigint
  readonly leaderEpoch: number
  readonly metadata: string | null
}

export interface NewTopic {
  readonly name: string
  readonly numPartitions?: number
  readonly replicationFactor?: number
  readonly configs?: Readonly<Record<string, string>>
}

const GROUP_STATES = [
  'Empty',
  'NotReady',
  'Assigning',
  'Reconciling',
  'Stable',
  'Dead',
  'PreparingRebalance',
  'CompletingRebalance',
]

/** A described group's row and how to turn it into a description once its error code is 0. */
interface DescribedRow<T> {
  readonly row: { readonly groupId: string; readonly errorCode: number; readonly errorMessage: string | null }
  readonly describe: () => T | KafkaError
}

/** What a describe row's error means: retry it, find its coordinator again, fail it, or (null) use it. */
function describeOutcome(row: DescribedRow<unknown>['row']): KafkaError | 'retry' | 'rediscover' | null {
  if (row.errorCode === 0) return null
  if (row.errorCode === 14) return 'retry'
  if (row.errorCode === 15 || row.errorCode === 16) return 'rediscover'
  return kafkaErrorFromCode(row.errorCode, row.errorMessage)
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

const toRecord = (kvs: ReadonlyArray<{ key: string; value: string }>): Record<string, string> =>
  Object.fromEntries(kvs.map((kv) => [kv.key, kv.value]))

export class Admin {
  readonly #client: NetworkClient
  readonly #defaultTimeoutMs: number

  private constructor(opts: AdminOptions) {
    this.#client = new NetworkClient(opts)
    this.#defaultTimeoutMs = opts.defaultApiTimeoutMs ?? 60_000
  }

  static create(opts: AdminOptions): Admin {
    return new Admin(opts)
  }

  /** The underlying network client (metadata, coordinators). */
  get network(): NetworkClient {
    return this.#client
  }

  #deadline(opts?: CallOptions): number {
    return Date.now() + (opts?.timeoutMs ?? this.#defaultTimeoutMs)
  }

  /** Lists groups on every broker, optionally filtered by type and state. */
  async listGroups(opts: ListGroupsOptions = {}): Promise<GroupListing[]> {
    const deadline = this.#deadline(opts)
    const types = (opts.types ?? []).map((t) => t.toLowerCase())
    const states = (opts.states ?? []).map(
      (s) => GROUP_STATES.find((x) => x.toLowerCase() === s.toLowerCase()) ?? s,
    )
    const md = await this.#client.withRetries(() => this.#client.metadata([]), {
      deadline,
      operation: 'listGroups',
    })
    const out: GroupListing[] = []
    for (const b of md.brokers) {
      const res = await this.#client.withRetries(
        async () => {
          const conn = await this.#client.connect(b.host, b.port)
          const version = conn.negotiateVersion(16)
          const r = await conn.send(
            16,
            { statesFilter: version >= 4 ? states : [], typesFilter: version >= 5 ? types : [] },
            { version },
          )
          if (r.errorCode !== 0) throw kafkaErrorFromCode(r.errorCode)
          return { r, version }
        },
        { deadline, operation: 'listGroups' },
      )
      for (const g of res.r.groups) {
        const groupType = res.version >= 5 ? g.groupType : null
        // Older brokers cannot filter; filter here on what they report.
        if (
          types.length > 0 &&
          res.version < 5 &&
          !types.includes((g.protocolType || 'classic').toLowerCase())
        )
          continue
        if (states.length > 0 && res.version < 4) continue
        out.push({
          groupId: g.groupId,
          protocolType: g.protocolType,
          groupState: res.version >= 4 ? g.groupState : null,
          groupType,
        })
      }
    }
    return out
  }

  /**
   * Describes streams groups, batched per coordinator. Asking for the topology description from a
   * broker whose StreamsGroupDescribe stops at v0 fails every group of that batch with
   * UnsupportedVersionError, as Kafka's admin client does.
   */
  describeStreamsGroups(
    groupIds: readonly string[],
    opts: DescribeStreamsGroupsOptions = {},
  ): KeyedResult<StreamsGroupDescription> {
    return this.#describeGroups(groupIds, opts, 'describeStreamsGroups', async (node, groups) => {
      const res = await this.#client.sendTo(node, 89, {
        groupIds: groups,
        includeAuthorizedOperations: opts.includeAuthorizedOperations ?? false,
        includeTopologyDescription: opts.includeTopologyDescription ?? false,
      })
      return res.groups.map((g) => ({ row: g, describe: () => this.#describedGroup(g, node) }))
    })
  }

  /**
   * Describes consumer groups (KIP-848) with ConsumerGroupDescribe, batched per coordinator: state,
   * epochs, assignor, and per member its subscription, assignment and target assignment. A group of
   * another type fails with Kafka's GROUP_ID_NOT_FOUND ("Group <g> is not a consumer group.").
   */
  describeConsumerGroups(
    groupIds: readonly string[],
    opts: DescribeConsumerGroupsOptions = {},
  ): KeyedResult<ConsumerGroupDescription> {
    return this.#describeGroups(groupIds, opts, 'describeConsumerGroups', async (node, groups) => {
      const res = await this.#client.sendTo(node, 69, {
        groupIds: groups,
        includeAuthorizedOperations: opts.includeAuthorizedOperations ?? false,
      })
      return res.groups.map((g) => ({ row: g, describe: () => consumerGroupFromWire(g, node) }))
    })
  }

  /**
   * Describes classic groups with DescribeGroups, batched per coordinator: state, protocol type and
   * protocol, and per member its client and (for protocol type `consumer`) assigned partitions. A
   * group the coordinator does not have is described in state `Dead`, as Kafka does.
   */
  describeClassicGroups(
    groupIds: readonly string[],
    opts: CallOptions = {},
  ): KeyedResult<ClassicGroupDescription> {
    return this.#describeGroups(groupIds, opts, 'describeClassicGroups', async (node, groups) => {
      const res = await this.#client.sendTo(node, 15, { groups, includeAuthorizedOperations: false })
      return res.groups.map((g) => ({ row: g, describe: () => classicGroupFromWire(g, node) }))
    })
  }

  /** Lists the consumer groups (KIP-848 and classic groups of protocol type `consumer`), as Kafka's admin does. */
  async listConsumerGroups(opts: Omit<ListGroupsOptions, 'types'> = {}): Promise<GroupListing[]> {
    const groups = await this.listGroups({ ...opts, types: ['consumer', 'classic'] })
    return groups.filter((g) => isConsumerProtocolType(g.protocolType))
  }

  /** One describe call per coordinator for every group, with the coordinator errors retried. */
  #describeGroups<T>(
    groupIds: readonly string[],
    opts: CallOptions,
    operation: string,
    send: (node: BrokerNode, groups: string[]) => Promise<DescribedRow<T>[]>,
  ): KeyedResult<T> {
    const pending = new Map(groupIds.map((g) => [g, deferred<T>()]))
    const result = new KeyedResult(new Map([...pending].map(([k, d]) => [k, d.promise])))
    void this.#describeLoop(pending, opts, operation, send).catch((e: unknown) => {
      for (const d of pending.values()) d.reject(e)
    })
    return result
  }

  async #describeLoop<T>(
    pending: Map<string, ReturnType<typeof deferred<T>>>,
    opts: CallOptions,
    operation: string,
    send: (node: BrokerNode, groups: string[]) => Promise<DescribedRow<T>[]>,
  ): Promise<void> {
    const deadline = this.#deadline(opts)
    let remaining = [...pending.keys()]
    for (let attempt = 0; remaining.length > 0; attempt++) {
      const retry: string[] = []
      let lastRetriable: KafkaError | null = null
      let coordinators: Map<string, BrokerNode | KafkaError>
      try {
        coordinators = await this.#client.findCoordinators(remaining)
      } catch (e) {
        if (!(e instanceof KafkaError) || !e.retriable) throw e
        coordinators = new Map(remaining.map((g) => [g, e]))
      }
      const batches = new Map<string, { node: BrokerNode; groups: string[] }>()
      for (const g of remaining) {
        const c = coordinators.get(g)!
        if (c instanceof KafkaError) {
          if (c.retriable) {
            retry.push(g)
            lastRetriable = c
          } else pending.get(g)!.reject(c)
          continue
        }
        const key = `${c.host}:${c.port}`
        const b = batches.get(key) ?? { node: c, groups: [] }
        b.groups.push(g)
        batches.set(key, b)
      }
      for (const { node, groups } of batches.values()) {
        try {
          const rows = await send(node, groups)
          for (const { row: described, describe } of rows) {
            const d = pending.get(described.groupId)
            if (d === undefined || !groups.includes(described.groupId)) continue
            const outcome = describeOutcome(described) ?? describe()
            if (outcome === 'retry' || outcome === 'rediscover') {
              if (outcome === 'rediscover') this.#client.markCoordinatorUnknown(described.groupId)
              retry.push(described.groupId)
              lastRetriable = kafkaErrorFromCode(described.errorCode, described.errorMessage)
            } else if (outcome instanceof KafkaError) d.reject(outcome)
            else d.resolve(outcome)
          }
          for (const g of groups) {
            if (!rows.some((x) => x.row.groupId === g)) {
              pending.get(g)!.reject(new IllegalStateError(`The response did not describe group ${g}`))
            }
          }
        } catch (e) {
          const err = e instanceof KafkaError ? e : new KafkaError(String(e), { cause: e })
          if (err.retriable) {
            for (const g of groups) this.#client.markCoordinatorUnknown(g)
            retry.push(...groups)
            lastRetriable = err
          } else {
            // One failure (for example UnsupportedVersion) fails the whole batch.
            for (const g of groups) pending.get(g)!.reject(err)
          }
        }
      }
      remaining = retry
      if (remaining.length === 0) break
      const wait = this.#client.backoffMs(attempt)
      if (Date.now() + wait >= deadline) {
        const err = new TimeoutError(
          `Timed out waiting for ${operation}: ${lastRetriable?.message ?? 'no coordinator'}`,
          lastRetriable,
        )
        for (const g of remaining) pending.get(g)!.reject(err)
        return
      }
      await new Promise((r) => setTimeout(r, wait))
    }
  }

  #describedGroup(
    g: StreamsGroupDescribeResponseDescribedGroup,
    coordinator: BrokerNode,
  ): StreamsGroupDescription | KafkaError {
    if (g.topology === null) return new IllegalStateError('Topology information is missing')
    let status: StreamsGroupTopologyDescriptionStatus
    try {
      status = topologyDescriptionStatusForId(g.topologyDescriptionStatus)
    } catch (e) {
      return new IllegalStateError(`Unknown topology description status ${g.topologyDescriptionStatus}`, e)
    }
    let topologyDescription: StreamsGroupTopologyDescription | null = null
    if (status === 'AVAILABLE') {
      if (g.topologyDescription === null) {
        return new IllegalStateError('Topology description is missing despite status AVAILABLE')
      }
      try {
        topologyDescription = topologyDescriptionFromWire(g.topologyDescription)
      } catch (e) {
        return e instanceof KafkaError ? e : new IllegalStateError(String(e), e)
      }
    }
    const assignment = (a: {
      activeTasks: TaskIds[]
      standbyTasks: TaskIds[]
      warmupTasks: TaskIds[]
    }): StreamsGroupMemberAssignment => ({
      activeTasks: a.activeTasks.map((t) => ({
        subtopologyId: t.subtopologyId,
        partitions: [...t.partitions],
      })),
      standbyTasks: a.standbyTasks.map((t) => ({
        subtopologyId: t.subtopologyId,
        partitions: [...t.partitions],
      })),
      warmupTasks: a.warmupTasks.map((t) => ({
        subtopologyId: t.subtopologyId,
        partitions: [...t.partitions],
      })),
    })
    const topicInfo = (t: {
      name: string
      partitions: number
      replicationFactor: number
      topicConfigs: Array<{ key: string; value: string }>
    }): StreamsGroupTopicInfo => ({
      name: t.name,
      partitions: t.partitions,
      replicationFactor: t.replicationFactor,
      topicConfigs: toRecord(t.topicConfigs),
    })
    return {
      groupId: g.groupId,
      groupEpoch: g.groupEpoch,
      targetAssignmentEpoch: g.assignmentEpoch,
      topologyEpoch: g.topology.epoch,
      subtopologies: (g.topology.subtopologies ?? []).map((s) => ({
        subtopologyId: s.subtopologyId,
        sourceTopics: s.sourceTopics,
        repartitionSinkTopics: s.repartitionSinkTopics,
        stateChangelogTopics: s.stateChangelogTopics.map(topicInfo),
        repartitionSourceTopics: s.repartitionSourceTopics.map(topicInfo),
      })),
      members: g.members.map((m) => ({
        memberId: m.memberId,
        memberEpoch: m.memberEpoch,
        instanceId: m.instanceId,
        rackId: m.rackId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        topologyEpoch: m.topologyEpoch,
        processId: m.processId,
        userEndpoint:
          m.userEndpoint === null ? null : { host: m.userEndpoint.host, port: m.userEndpoint.port },
        clientTags: toRecord(m.clientTags),
        assignment: assignment(m.assignment),
        targetAssignment: assignment(m.targetAssignment),
        isClassic: m.isClassic,
      })),
      groupState: g.groupState,
      coordinator,
      authorizedOperations: g.authorizedOperations === -2147483648 ? null : g.authorizedOperations,
      topologyDescription,
      topologyDescriptionStatus: status,
      assignorName: g.assignorName,
    }
  }

  /**
   * Deletes groups. A failed group's error carries the DeleteGroups v3 `ErrorMessage` as its
   * message and as `brokerMessage` (Kafka's Java admin drops it).
   */
  deleteGroups(groupIds: readonly string[], opts: CallOptions = {}): KeyedResult<void> {
    const pending = new Map(groupIds.map((g) => [g, deferred<void>()]))
    const result = new KeyedResult(new Map([...pending].map(([k, d]) => [k, d.promise])))
    const deadline = this.#deadline(opts)
    void Promise.all(
      groupIds.map(async (g) => {
        const d = pending.get(g)!
        try {
          await this.#client.withRetries(
            async () => {
              const node = await this.#client.findCoordinator(g)
              const res = await this.#client.sendTo(node, 42, { groupsNames: [g] })
              const r = res.results.find((x) => x.groupId === g)
              if (r === undefined) throw new IllegalStateError(`The response did not mention group ${g}`)
              if (r.errorCode !== 0) throw kafkaErrorFromCode(r.errorCode, r.errorMessage)
            },
            { deadline, operation: 'deleteGroups', coordinatorKey: g },
          )
          d.resolve()
        } catch (e) {
          d.reject(e)
        }
      }),
    )
    return result
  }

  /**
   * Committed offsets of a streams (or consumer) group, sorted by topic and partition. With
   * `requireStable` (default false, as Kafka's ListStreamsGroupOffsetsOptions) the broker answers
   * only once no transactional offset is pending.
   */
  async listStreamsGroupOffsets(
    groupId: string,
    opts: CallOptions & { readonly requireStable?: boolean } = {},
  ): Promise<TopicPartitionOffset[]> {
    const requireStable = opts.requireStable ?? false
    const deadline = this.#deadline(opts)
    return this.#client.withRetries(
      async () => {
        const node = await this.#client.findCoordinator(groupId)
        const conn = await this.#client.connect(node.host, node.port)
        // v10 names topics by id only; stay at 9, which carries names.
        const version = conn.negotiateVersion(9, 9)
        const out: TopicPartitionOffset[] = []
        if (version >= 8) {
          const res = await conn.send(
            9,
            {
              groupId: '',
              topics: [],
              groups: [{ groupId, memberId: null, memberEpoch: -1, topics: null }],
              requireStable,
            },
            { version },
          )
          const g = res.groups.find((x) => x.groupId === groupId)
          if (g === undefined) throw new IllegalStateError(`The response did not mention group ${groupId}`)
          if (g.errorCode !== 0) throw kafkaErrorFromCode(g.errorCode)
          for (const t of g.topics) {
            for (const p of t.partitions) {
              if (p.errorCode !== 0) throw kafkaErrorFromCode(p.errorCode)
              out.push({
                topic: t.name,
                partition: p.partitionIndex,
                offset: p.committedOffset,
                leaderEpoch: p.committedLeaderEpoch,
                metadata: p.metadata,
              })
            }
          }
        } else {
          const res = await conn.send(
            9,
            { groupId, topics: null, groups: [], requireStable: version >= 7 && requireStable },
            { version },
          )
          if (res.errorCode !== 0) throw kafkaErrorFromCode(res.errorCode)
          for (const t of res.topics) {
            for (const p of t.partitions) {
              out.push({
                topic: t.name,
                partition: p.partitionIndex,
                offset: p.committedOffset,
                leaderEpoch: p.committedLeaderEpoch,
                metadata: p.metadata,
              })
            }
          }
        }
        return out.sort((a, b) =>
          a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition,
        )
      },
      { deadline, operation: 'listStreamsGroupOffsets', coordinatorKey: groupId },
    )
  }

  /** Creates topics; each topic's promise fails with the broker's error for it. */
  createTopics(topics: readonly NewTopic[], opts: CallOptions = {}): KeyedResult<void> {
    const pending = new Map(topics.map((t) => [t.name, deferred<void>()]))
    const result = new KeyedResult(new Map([...pending].map(([k, d]) => [k, d.promise])))
    const timeoutMs = opts.timeoutMs ?? this.#defaultTimeoutMs
    void this.#client
      .withRetries(
        async () => {
          const md = await this.#client.metadata([])
          const controller = md.brokers.find((b) => b.nodeId === md.controllerId) ?? md.brokers[0]
          if (controller === undefined) throw new KafkaError('No broker in metadata', { retriable: true })
          return this.#client.sendTo(controller, 19, {
            topics: topics.map((t) => ({
              name: t.name,
              numPartitions: t.numPartitions ?? -1,
              replicationFactor: t.replicationFactor ?? -1,
              assignments: [],
              configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
            })),
            timeoutMs,
            validateOnly: false,
          })
        },
        { deadline: Date.now() + timeoutMs, operation: 'createTopics' },
      )
      .then(
        (res) => {
          for (const [name, d] of pending) {
            const r = res.topics.find((t) => t.name === name)
            if (r === undefined) d.reject(new IllegalStateError(`The response did not mention topic ${name}`))
            else if (r.errorCode !== 0) d.reject(kafkaErrorFromCode(r.errorCode, r.errorMessage))
            else d.resolve()
          }
        },
        (e: unknown) => {
          for (const d of pending.values()) d.reject(e)
        },
      )
    return result
  }

  /** Topic names (internal topics excluded unless asked), sorted. */
  async listTopics(opts: CallOptions & { readonly listInternal?: boolean } = {}): Promise<string[]> {
    const md = await this.#client.withRetries(() => this.#client.metadata(null), {
      deadline: this.#deadline(opts),
      operation: 'listTopics',
    })
    return md.topics
      .filter((t) => t.errorCode === 0 && t.name !== null && (opts.listInternal === true || !t.isInternal))
      .map((t) => t.name!)
      .sort()
  }

  /**
   * Offsets of partitions by OffsetSpec (earliest, latest, max timestamp, a timestamp, …), asked of
   * each partition's leader. Each partition's answer settles on its own (`partitionResult`).
   */
  listOffsets(queries: readonly ListOffsetsQuery[], opts: ListOffsetsOptions = {}): ListOffsetsResult {
    return listOffsets(this.#client, queries, opts, this.#defaultTimeoutMs)
  }

  /**
   * Commits offsets for a streams group as an admin (OffsetCommit without a member), which the
   * coordinator accepts only while the group is empty; per-partition errors, Kafka's `all()`.
   */
  alterStreamsGroupOffsets(
    groupId: string,
    offsets: readonly OffsetAndMetadata[],
    opts: CallOptions = {},
  ): AlterOffsetsResult {
    return alterGroupOffsets(this.#client, groupId, offsets, this.#deadline(opts))
  }

  /** Deletes a streams group's committed offsets for the partitions (OffsetDelete). */
  deleteStreamsGroupOffsets(
    groupId: string,
    partitions: readonly TopicPartition[],
    opts: CallOptions = {},
  ): DeleteOffsetsResult {
    return deleteGroupOffsets(this.#client, groupId, partitions, this.#deadline(opts))
  }

  /**
   * The log directories of brokers (every broker when `brokerIds` is absent): each directory's
   * path, error, file-system sizes and the size of every partition it holds (DescribeLogDirs).
   */
  describeLogDirs(
    brokerIds?: readonly number[],
    opts: CallOptions = {},
  ): Promise<Map<number, LogDirDescription[]>> {
    return describeLogDirs(this.#client, brokerIds ?? null, this.#deadline(opts))
  }

  /**
   * Deletes the records of partitions before the given offsets (DeleteRecords; -1 = the high
   * watermark). Keyed by `topic-partition`; each key resolves with the partition's new low watermark.
   */
  deleteRecords(partitions: readonly RecordsToDelete[], opts: CallOptions = {}): KeyedResult<number> {
    const timeoutMs = opts.timeoutMs ?? this.#defaultTimeoutMs
    return new KeyedResult(deleteRecords(this.#client, partitions, Date.now() + timeoutMs, timeoutMs))
  }

  /** Describes topics by name: partitions with leader, replicas and ISR. */
  describeTopics(names: readonly string[], opts: CallOptions = {}): KeyedResult<TopicDescription> {
    return new KeyedResult(describeTopics(this.#client, names, this.#deadline(opts)))
  }

  /** Deletes topics by name. */
  deleteTopics(names: readonly string[], opts: CallOptions = {}): KeyedResult<void> {
    const timeoutMs = opts.timeoutMs ?? this.#defaultTimeoutMs
    return new KeyedResult(deleteTopics(this.#client, names, Date.now() + timeoutMs, timeoutMs))
  }

  /**
   * Describes config resources (GROUP, TOPIC, BROKER, …): every entry with its value, source and
   * type, with synonyms and documentation when asked. Each resource's result settles on its own.
   */
  describeConfigs(
    resources: readonly ConfigResource[],
    opts: DescribeConfigsOptions = {},
  ): ConfigResourceResult<Config> {
    return describeConfigs(this.#client, resources, opts, this.#deadline(opts))
  }

  /**
   * Changes config keys of resources (SET, DELETE, APPEND, SUBTRACT), optionally only validating.
   * Takes `[resource, ops]` pairs (a Map works); each resource's result settles on its own.
   */
  incrementalAlterConfigs(
    changes: Iterable<readonly [ConfigResource, readonly AlterConfigOp[]]>,
    opts: AlterConfigsOptions = {},
  ): ConfigResourceResult<void> {
    return incrementalAlterConfigs(this.#client, changes, opts, this.#deadline(opts))
  }

  /**
   * Describes transactional ids at their transaction coordinators (DescribeTransactions): state,
   * producer id and epoch, timeout, start time and partitions. Each id's result settles on its own.
   */
  describeTransactions(
    transactionalIds: readonly string[],
    opts: CallOptions = {},
  ): KeyedResult<TransactionDescription> {
    return new KeyedResult(describeTransactions(this.#client, transactionalIds, this.#deadline(opts)))
  }

  /** Lists the transactions every broker coordinates (ListTransactions), optionally filtered. */
  listTransactions(opts: CallOptions & ListTransactionsFilters = {}): Promise<TransactionListing[]> {
    return listTransactions(this.#client, opts, this.#deadline(opts))
  }

  /**
   * The producers with state in partitions, asked of each leader (DescribeProducers). Keyed by
   * `topic-partition`.
   */
  describeProducers(
    partitions: readonly TopicPartition[],
    opts: CallOptions = {},
  ): KeyedResult<ProducerState[]> {
    return new KeyedResult(describeProducers(this.#client, partitions, this.#deadline(opts)))
  }

  async close(): Promise<void> {
    await this.#client.close()
  }
}
