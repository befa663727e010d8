/**
 * The console's JSON answers, computed from a ConsoleSource. Remembers the last description it saw
 * per group so that a group whose stored description lags its topology epoch still has a drawing,
 * flagged as being of another epoch.
 */
import {
  isConsumerProtocolType,
  type StreamsGroupDescription,
  type StreamsGroupTopologyDescription,
} from '../clients/admin/index.js'
import type {
  ApiError,
  ConsumerGroupResponse,
  ConsumerGroupSummary,
  ConsumerGroupsResponse,
  ConsumerPartitionLag,
  DescriptionDownload,
  GroupReadiness,
  GroupResponse,
  GroupsResponse,
  GroupSummary,
  PartitionLag,
  ShownDescription,
  TopicsResponse,
  TopicSummary,
  TransactionsResponse,
  TransactionSummary,
} from './api-types.js'
import type { ConsoleSource } from './source.js'

/** An API failure with the HTTP status it is answered with. */
export class ConsoleApiError extends Error {
  override name = 'ConsoleApiError'
  constructor(
    readonly status: number,
    readonly body: ApiError,
  ) {
    super(body.message)
  }
}

/** The error name the API reports: Kafka's (`GROUP_ID_NOT_FOUND`) when the error carries one. */
export function apiError(e: unknown): ApiError {
  if (e instanceof Error) {
    const name = (e as { errorName?: unknown }).errorName
    return { errorName: typeof name === 'string' ? name : e.name, message: e.message }
  }
  return { errorName: 'UNKNOWN', message: String(e) }
}

const byGroupId = (a: GroupSummary, b: GroupSummary): number =>
  a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0

const byTopicPartition = (
  a: { readonly topic: string; readonly partition: number },
  b: { readonly topic: string; readonly partition: number },
): number => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition)

/** The topics a group reads: its subtopologies' source and repartition source topics. */
export function groupSourceTopics(g: StreamsGroupDescription): string[] {
  const topics = new Set<string>()
  for (const s of g.subtopologies) {
    for (const t of s.sourceTopics) topics.add(t)
    for (const t of s.repartitionSourceTopics) topics.add(t.name)
  }
  return [...topics].sort()
}

export class ConsoleApi {
  readonly #source: ConsoleSource
  readonly #now: () => Date
  readonly #lastDescription = new Map<
    string,
    { topologyEpoch: number; description: StreamsGroupTopologyDescription }
  >()

  constructor(source: ConsoleSource, opts: { readonly now?: () => Date } = {}) {
    this.#source = source
    this.#now = opts.now ?? (() => new Date())
  }

  async groups(): Promise<GroupsResponse> {
    const listings = await this.#source.listStreamsGroups()
    const ids = [...new Set(listings.map((g) => g.groupId))]
    const described = await this.#source.describeStreamsGroups(ids)
    const groups = ids.map((groupId): GroupSummary => {
      const outcome = described.get(groupId)
      const listed = listings.find((g) => g.groupId === groupId)
      if (outcome === undefined || 'error' in outcome) {
        return {
          groupId,
          groupState: listed?.groupState ?? null,
          groupEpoch: null,
          topologyEpoch: null,
          memberCount: null,
          topologyDescriptionStatus: null,
          error:
            outcome === undefined
              ? { errorName: 'UNKNOWN', message: `No description of group ${groupId}` }
              : apiError(outcome.error),
        }
      }
      const g = outcome.value
      this.#remember(g)
      return {
        groupId,
        groupState: g.groupState,
        groupEpoch: g.groupEpoch,
        topologyEpoch: g.topologyEpoch,
        memberCount: g.members.length,
        topologyDescriptionStatus: g.topologyDescriptionStatus,
        error: null,
      }
    })
    return { groups: groups.sort(byGroupId), fetchedAt: this.#now().toISOString() }
  }

  async group(groupId: string): Promise<GroupResponse> {
    const group = await this.#describeOne(
      groupId,
      (ids) => this.#source.describeStreamsGroups(ids),
      () => null,
    )
    this.#remember(group)
    let offsets: PartitionLag[] | null = null
    let offsetsError: ApiError | null = null
    try {
      offsets = await this.#groupOffsets(group)
    } catch (e) {
      offsetsError = apiError(e)
    }
    return {
      group,
      readiness: group.groupState === 'NotReady' ? await this.#readiness(group) : null,
      shownDescription: this.#shown(group),
      offsets,
      offsetsError,
      fetchedAt: this.#now().toISOString(),
    }
  }

  /**
   * Every topic with its partitions' log start and end offsets and sizes. Sizes are null (and
   * `sizesError` says why) when the cluster's log directories could not be described.
   */
  async topics(): Promise<TopicsResponse> {
    const source = this.#source
    if (source.topicOffsets === undefined) {
      throw new ConsoleApiError(501, { errorName: 'NOT_SERVED', message: 'This console has no topic view.' })
    }
    const [outcomes, sizes] = await Promise.all([
      source.topicOffsets(null),
      (source.logSizes?.() ?? Promise.reject(new Error('No log sizes in this console.'))).then(
        (v) => ({ value: v }),
        (e: unknown) => ({ error: apiError(e) }),
      ),
    ])
    const topics = outcomes.map(
      (o): TopicSummary =>
        'error' in o
          ? { name: o.topic, partitions: [], error: apiError(o.error) }
          : {
              name: o.topic,
              partitions: [...o.partitions]
                .sort((a, b) => a.partition - b.partition)
                .map((p) => ({
                  ...p,
                  size: 'value' in sizes ? (sizes.value.get(`${o.topic}-${p.partition}`) ?? null) : null,
                })),
              error: null,
            },
    )
    return {
      topics: topics.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
      sizesError: 'error' in sizes ? sizes.error : null,
      fetchedAt: this.#now().toISOString(),
    }
  }

  /**
   * The open transactions (Ongoing, PrepareCommit, PrepareAbort) with their age, oldest first; one
   * that could not be described is listed with its error, last.
   */
  async transactions(): Promise<TransactionsResponse> {
    const source = this.#source
    if (source.openTransactions === undefined) {
      throw new ConsoleApiError(501, {
        errorName: 'NOT_SERVED',
        message: 'This console has no transaction view.',
      })
    }
    const now = this.#now()
    const rows = (await source.openTransactions()).map((o): TransactionSummary => {
      if ('error' in o) {
        return {
          transactionalId: o.transactionalId,
          state: '',
          producerId: '-1',
          producerEpoch: -1,
          transactionTimeoutMs: -1,
          startedAt: null,
          ageMs: null,
          partitions: [],
          error: apiError(o.error),
        }
      }
      const t = o.value
      const start = t.transactionStartTimeMs
      return {
        transactionalId: t.transactionalId,
        state: t.state,
        producerId: t.producerId.toString(),
        producerEpoch: t.producerEpoch,
        transactionTimeoutMs: t.transactionTimeoutMs,
        startedAt: start === null ? null : new Date(start).toISOString(),
        ageMs: start === null ? null : Math.max(0, now.getTime() - start),
        partitions: t.topicPartitions.map((p) => ({ topic: p.topic, partition: p.partition })),
        error: null,
      }
    })
    const age = (r: TransactionSummary): number => (r.error !== null ? -2 : (r.ageMs ?? -1))
    rows.sort((a, b) => age(b) - age(a) || (a.transactionalId < b.transactionalId ? -1 : 1))
    return { transactions: rows, fetchedAt: now.toISOString() }
  }

  /**
   * What the topics a NotReady group's topology needs say: which source and internal topics are
   * missing, and which internal topics (with a partition count in the topology) have another one.
   */
  async #readiness(g: StreamsGroupDescription): Promise<GroupReadiness> {
    const none = { missingSourceTopics: [], missingInternalTopics: [], incorrectlyPartitionedTopics: [] }
    const source = this.#source
    if (source.topicOffsets === undefined) {
      return { ...none, error: { errorName: 'NOT_SERVED', message: 'This console reads no topics.' } }
    }
    const sources = new Set<string>()
    const internal = new Map<string, number>()
    for (const s of g.subtopologies) {
      for (const t of s.sourceTopics) sources.add(t)
      for (const t of [...s.repartitionSourceTopics, ...s.stateChangelogTopics])
        internal.set(t.name, Math.max(internal.get(t.name) ?? 0, t.partitions))
    }
    let outcomes: Awaited<ReturnType<NonNullable<ConsoleSource['topicOffsets']>>>
    try {
      outcomes = await source.topicOffsets([...new Set([...sources, ...internal.keys()])].sort())
    } catch (e) {
      return { ...none, error: apiError(e) }
    }
    const missingSourceTopics: string[] = []
    const missingInternalTopics: string[] = []
    const incorrectlyPartitionedTopics: { topic: string; expected: number; actual: number }[] = []
    let error: ApiError | null = null
    for (const o of outcomes) {
      if ('error' in o) {
        const e = apiError(o.error)
        if (e.errorName !== 'UNKNOWN_TOPIC_OR_PARTITION') error ??= e
        else if (sources.has(o.topic)) missingSourceTopics.push(o.topic)
        else missingInternalTopics.push(o.topic)
        continue
      }
      const expected = internal.get(o.topic) ?? 0
      if (!sources.has(o.topic) && expected > 0 && o.partitions.length !== expected)
        incorrectlyPartitionedTopics.push({ topic: o.topic, expected, actual: o.partitions.length })
    }
    return { missingSourceTopics, missingInternalTopics, incorrectlyPartitionedTopics, error }
  }

  /**
   * The lag of every partition the group reads or has committed for: end offset − committed offset,
   * or end − log start offset when nothing is committed (kafka-streams-groups --describe --offsets).
   */
  async #groupOffsets(g: StreamsGroupDescription): Promise<PartitionLag[] | null> {
    return this.#lags(g.groupId, groupSourceTopics(g))
  }

  /**
   * The lag of every partition of `topics` and of the topics the group has committed for, sorted by
   * topic and partition; null when the source reads no offsets.
   */
  async #lags(groupId: string, topics: readonly string[]): Promise<PartitionLag[] | null> {
    const source = this.#source
    if (source.topicOffsets === undefined || source.committedOffsets === undefined) return null
    const committed = await source.committedOffsets(groupId)
    const all = [...new Set([...topics, ...committed.map((c) => c.topic)])].sort()
    const byKey = new Map(committed.map((c) => [`${c.topic}-${c.partition}`, c.offset]))
    const rows: PartitionLag[] = []
    for (const t of await source.topicOffsets(all)) {
      if ('error' in t) {
        for (const c of committed.filter((x) => x.topic === t.topic))
          rows.push({
            topic: c.topic,
            partition: c.partition,
            committedOffset: c.offset,
            logStartOffset: null,
            logEndOffset: null,
            lag: null,
          })
        continue
      }
      for (const p of t.partitions) {
        const c = byKey.get(`${t.topic}-${p.partition}`) ?? null
        const from = c ?? p.logStartOffset
        rows.push({
          topic: t.topic,
          partition: p.partition,
          committedOffset: c,
          logStartOffset: p.logStartOffset,
          logEndOffset: p.logEndOffset,
          lag: p.logEndOffset === null || from === null ? null : p.logEndOffset - from,
        })
      }
    }
    return rows.sort(byTopicPartition)
  }

  /**
   * The consumer groups (KIP-848) and classic groups with their type, state, epoch, assignor and
   * member count. A classic group is described with DescribeGroups: it has no epoch, its assignor is
   * the protocol it chose, and one with offsets only is Empty with no members.
   */
  async consumerGroups(): Promise<ConsumerGroupsResponse> {
    const source = this.#source
    if (source.listConsumerGroups === undefined || source.describeConsumerGroups === undefined) {
      return { groups: [], fetchedAt: this.#now().toISOString() }
    }
    // As kafka-consumer-groups lists them: a classic group of another protocol type is left out.
    const listings = (await source.listConsumerGroups()).filter((g) => isConsumerProtocolType(g.protocolType))
    const typeOf = new Map(
      listings.map((g) => [g.groupId, g.groupType === 'classic' ? 'classic' : 'consumer']),
    )
    const ids = [...typeOf.keys()]
    const classicIds =
      source.describeClassicGroups === undefined ? [] : ids.filter((id) => typeOf.get(id) === 'classic')
    const [described, classic] = await Promise.all([
      source.describeConsumerGroups(ids.filter((id) => !classicIds.includes(id))),
      classicIds.length === 0 ? new Map() : source.describeClassicGroups!(classicIds),
    ])
    const groups = ids.map((groupId): ConsumerGroupSummary => {
      const groupType = typeOf.get(groupId)!
      const outcome = described.get(groupId) ?? classic.get(groupId)
      if (outcome === undefined || 'error' in outcome) {
        return {
          groupId,
          groupType,
          groupState: listings.find((g) => g.groupId === groupId)?.groupState ?? null,
          groupEpoch: null,
          assignorName: null,
          memberCount: null,
          error:
            outcome === undefined
              ? { errorName: 'UNKNOWN', message: `No description of group ${groupId}` }
              : apiError(outcome.error),
        }
      }
      const g = outcome.value
      return {
        groupId,
        groupType,
        groupState: g.groupState,
        groupEpoch: 'groupEpoch' in g ? g.groupEpoch : null,
        assignorName: 'assignorName' in g ? g.assignorName : g.protocol === '' ? null : g.protocol,
        memberCount: g.members.length,
        error: null,
      }
    })
    return {
      groups: groups.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0)),
      fetchedAt: this.#now().toISOString(),
    }
  }

  /**
   * One consumer group or classic group: its description, and the lag of every partition of the
   * topics its members subscribe to (by name), are assigned, or it has committed for, with the
   * member owning each. A group ConsumerGroupDescribe does not know is asked for with DescribeGroups;
   * when that does not know it either (`Dead`), the first answer stands.
   */
  async consumerGroup(groupId: string): Promise<ConsumerGroupResponse> {
    const source = this.#source
    if (source.describeConsumerGroups === undefined) {
      throw new ConsoleApiError(501, {
        errorName: 'NOT_SERVED',
        message: 'This console has no consumer group view.',
      })
    }
    const describeConsumer = source.describeConsumerGroups.bind(source)
    const describeClassic = source.describeClassicGroups?.bind(source)
    const group = await this.#describeOne(groupId, describeConsumer, (first) =>
      first.errorName === 'GROUP_ID_NOT_FOUND' && describeClassic !== undefined
        ? this.#describeOne(groupId, describeClassic, () => null).then((c) => {
            if (c.groupState === 'Dead') return null
            if (isConsumerProtocolType(c.protocolType)) return c
            // What kafka-consumer-groups --describe answers for such a group.
            throw new ConsoleApiError(404, {
              errorName: 'GROUP_ID_NOT_FOUND',
              message: `GroupId ${groupId} is not a consumer group (${c.protocolType}).`,
            })
          })
        : null,
    )
    const owner = new Map<string, string>()
    const topics = new Set<string>()
    for (const m of group.members) {
      if ('subscribedTopicNames' in m) {
        for (const t of m.subscribedTopicNames) topics.add(t)
        for (const p of m.targetAssignment) topics.add(p.topic)
      }
      for (const p of m.assignment) {
        topics.add(p.topic)
        owner.set(`${p.topic}-${p.partition}`, m.memberId)
      }
    }
    let offsets: ConsumerPartitionLag[] | null = null
    let offsetsError: ApiError | null = null
    try {
      const lags = await this.#lags(groupId, [...topics])
      offsets = lags?.map((l) => ({ ...l, memberId: owner.get(`${l.topic}-${l.partition}`) ?? null })) ?? null
    } catch (e) {
      offsetsError = apiError(e)
    }
    const page = { offsets, offsetsError, fetchedAt: this.#now().toISOString() }
    return 'groupEpoch' in group
      ? { groupType: 'consumer', group, ...page }
      : { groupType: 'classic', group, ...page }
  }

  /**
   * One group described by `describe`; a failure answers 404 (GROUP_ID_NOT_FOUND) or 502, unless
   * `otherwise` finds the group another way.
   */
  async #describeOne<T, U = never>(
    groupId: string,
    describe: (ids: readonly string[]) => Promise<ReadonlyMap<string, { value: T } | { error: Error }>>,
    otherwise: (error: ApiError) => Promise<U | null> | null,
  ): Promise<T | U> {
    const outcome = (await describe([groupId])).get(groupId)
    if (outcome === undefined) {
      throw new ConsoleApiError(502, { errorName: 'UNKNOWN', message: `No description of group ${groupId}` })
    }
    if ('error' in outcome) {
      const body = apiError(outcome.error)
      const found = await otherwise(body)
      if (found !== null) return found
      throw new ConsoleApiError(body.errorName === 'GROUP_ID_NOT_FOUND' ? 404 : 502, body)
    }
    return outcome.value
  }

  async descriptionDownload(groupId: string): Promise<DescriptionDownload> {
    const { group, shownDescription } = await this.group(groupId)
    if (shownDescription === null) {
      throw new ConsoleApiError(404, {
        errorName: 'TOPOLOGY_DESCRIPTION_NOT_AVAILABLE',
        message: `Group ${groupId} has no topology description (status ${group.topologyDescriptionStatus}).`,
      })
    }
    return {
      groupId,
      topologyEpoch: shownDescription.topologyEpoch,
      current: shownDescription.current,
      topologyDescription: shownDescription.description,
    }
  }

  #remember(g: StreamsGroupDescription): void {
    if (g.topologyDescriptionStatus === 'AVAILABLE' && g.topologyDescription !== null) {
      this.#lastDescription.set(g.groupId, {
        topologyEpoch: g.topologyEpoch,
        description: g.topologyDescription,
      })
    }
  }

  #shown(g: StreamsGroupDescription): ShownDescription | null {
    if (g.topologyDescriptionStatus === 'AVAILABLE' && g.topologyDescription !== null) {
      return { topologyEpoch: g.topologyEpoch, current: true, description: g.topologyDescription }
    }
    const last = this.#lastDescription.get(g.groupId)
    // A description remembered for the same epoch that is no longer available (plugin lost it, or
    // an ERROR) is not shown: only an older epoch's drawing is meaningful, and it is flagged.
    if (last === undefined || last.topologyEpoch === g.topologyEpoch) return null
    return { topologyEpoch: last.topologyEpoch, current: false, description: last.description }
  }
}
