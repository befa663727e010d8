/**
 * What kafka-streams-groups reads about a group's topics: its committed offsets on its input
 * topics (source topics, and for `--shift-by`/`--to-current` the repartition source topics too),
 * and its internal topics (repartition and changelog topics named `<group>-…`), as Kafka's
 * StreamsGroupCommand finds them.
 */
import type { StreamsGroupDescription } from '../../clients/admin/index.js'
import { javaHashOrder, javaStringHash } from '../../java-order.js'
import { UnsupportedVersionError } from '../../clients/network/errors.js'
import { type CommandContext, getOrRuntime, javaToString, printError, printErrorWithTrace } from './io.js'
import { type PlannedOffset, tpKey } from './offsets-resetter.js'

/** Committed offsets by partition key (leader epoch -1 when none was committed). */
export type CommittedOffsets = Map<string, PlannedOffset & { readonly leaderEpoch: number }>

async function committedOn(
  ctx: CommandContext,
  groupId: string,
  withRepartition: boolean,
): Promise<CommittedOffsets> {
  const d = await getOrRuntime(
    ctx.admin.describeStreamsGroups([groupId], { timeoutMs: ctx.timeoutMs }).get(groupId),
  )
  const topics = new Set(
    d.subtopologies.flatMap((s) => [
      ...s.sourceTopics,
      ...(withRepartition ? s.repartitionSourceTopics.map((t) => t.name) : []),
    ]),
  )
  const offsets = await getOrRuntime(ctx.admin.listStreamsGroupOffsets(groupId, { timeoutMs: ctx.timeoutMs }))
  const out: CommittedOffsets = new Map()
  for (const o of offsets) {
    if (topics.has(o.topic)) {
      out.set(tpKey(o.topic, o.partition), {
        topic: o.topic,
        partition: o.partition,
        offset: o.offset,
        leaderEpoch: o.leaderEpoch,
      })
    }
  }
  return out
}

/** Kafka's getCommittedOffsets: offsets on source and repartition source topics. */
export function committedOffsets(ctx: CommandContext, groupId: string): Promise<CommittedOffsets> {
  return committedOn(ctx, groupId, true)
}

/** Kafka's getInputTopicOffsets: offsets on source topics only (`--all-input-topics`). */
export function inputTopicOffsets(ctx: CommandContext, groupId: string): Promise<CommittedOffsets> {
  return committedOn(ctx, groupId, false)
}

/** Kafka Streams' internal topic names: changelog, repartition and foreign-key join topics. */
export function matchesInternalTopicFormat(topic: string): boolean {
  return (
    topic.endsWith('-changelog') ||
    topic.endsWith('-repartition') ||
    topic.endsWith('-subscription-registration-topic') ||
    topic.endsWith('-subscription-response-topic') ||
    /^.+-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-\d+-topic$/s.test(topic) ||
    /^.+-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-\d+-topic$/s.test(topic)
  )
}

export function isInferredInternalTopic(topic: string, applicationId: string): boolean {
  return topic.startsWith(`${applicationId}-`) && matchesInternalTopicFormat(topic)
}

/** A group's repartition and changelog topics that are not also its source topics. */
function internalTopicsOf(d: StreamsGroupDescription): string[] {
  const sources = new Set(d.subtopologies.flatMap((s) => s.sourceTopics))
  // Kafka keeps each subtopology's topic infos in hash maps keyed by name.
  return d.subtopologies
    .flatMap((s) => [
      ...javaHashOrder(
        s.repartitionSourceTopics.map((t) => t.name),
        javaStringHash,
      ),
      ...javaHashOrder(
        s.stateChangelogTopics.map((t) => t.name),
        javaStringHash,
      ),
    ])
    .filter((t) => !sources.has(t))
}

/**
 * Kafka's retrieveInternalTopics: each group's internal topics, leaving out (with an error line)
 * those whose name does not mark them as the group's. A failure to describe prints Kafka's error
 * (with the topics found by name when the broker cannot describe streams groups) and gives none.
 */
export async function retrieveInternalTopics(
  ctx: CommandContext,
  groupIds: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  let described: Map<string, StreamsGroupDescription>
  try {
    described = await ctx.admin.describeStreamsGroups(groupIds, { timeoutMs: ctx.timeoutMs }).all()
  } catch (e) {
    if (e instanceof UnsupportedVersionError) {
      try {
        const all = await ctx.admin.listTopics({ timeoutMs: ctx.timeoutMs })
        const internal = all.filter((t) => groupIds.some((g) => isInferredInternalTopic(t, g)))
        printErrorWithTrace(
          ctx.io,
          'Retrieving internal topics is not supported by the broker version.\n' +
            `Internal topics: (${internal.join(',')}).\n` +
            "Use 'kafka-topics.sh' to delete the group's internal topics.",
          e,
        )
      } catch {
        printErrorWithTrace(
          ctx.io,
          "Retrieving internal topics is not supported by the broker version. Use 'kafka-topics.sh' to list and delete the group's internal topics.",
          e,
        )
      }
    } else {
      printErrorWithTrace(ctx.io, `Retrieving internal topics failed due to ${javaToString(e)}`, e)
    }
    return out
  }
  // DescribeStreamsGroupsResult.all() fills `new HashMap<>(size)`.
  for (const groupId of javaHashOrder([...described.keys()], javaStringHash, described.size)) {
    const internal = internalTopicsOf(described.get(groupId)!).filter((t) => {
      if (isInferredInternalTopic(t, groupId)) return true
      printError(
        ctx.io,
        `The internal topic '${t}' is not inferred as internal and thus will not be deleted with the group '${groupId}'.`,
      )
      return false
    })
    if (internal.length > 0) out.set(groupId, internal)
  }
  return out
}

/**
 * Deletes topics (Kafka's `deleteTopics(…).all().get()`): resolves, or rejects with the first failed
 * topic's error in Kafka's order.
 */
export async function deleteTopicsAll(ctx: CommandContext, topics: readonly string[]): Promise<void> {
  const settled = await ctx.admin.deleteTopics(topics, { timeoutMs: ctx.timeoutMs }).settled()
  for (const t of javaHashOrder([...settled.keys()], javaStringHash)) {
    const r = settled.get(t)!
    if ('error' in r) throw r.error
  }
}
