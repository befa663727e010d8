/**
 * `kafka-streams-groups --reset-offsets`, as Kafka's StreamsGroupCommand.resetOffsets: for each
 * group (in Kafka's hash-map order), an Empty or Dead group, or one the broker does not know, gets
 * a plan for the chosen scope and scenario, committed with `--execute` (then the internal topics
 * named by `--delete-internal-topic` or found for `--delete-all-internal-topics` are deleted); any
 * other state prints Kafka's error and plans nothing. The plans print as Kafka's
 * GROUP/TOPIC/PARTITION/NEW-OFFSET table or, with `--export`, as its CSV.
 */
import { KafkaError, UnsupportedVersionError } from '../../clients/network/errors.js'
import { javaHashOrder, javaStringHash } from '../../java-order.js'
import {
  type CommandContext,
  getOrRuntime,
  javaToString,
  printError,
  printErrorWithTrace,
  rethrownCause,
  runtimeOfExecution,
} from './io.js'
import { csvLine } from './java-text.js'
import { OffsetsResetter, type PlannedOffset, type ResetValues, distinct, tpKey } from './offsets-resetter.js'
import {
  committedOffsets,
  deleteTopicsAll,
  inputTopicOffsets,
  retrieveInternalTopics,
} from './group-topics.js'
import { RESET_SCENARIOS, UsageExit } from './options.js'

export type ResetResult = Map<string, PlannedOffset[]>

/** Groups named by `--all-groups` (ListGroups of streams groups) or `--group`. */
async function groupIdsOf(ctx: CommandContext): Promise<string[]> {
  if (!ctx.o.has('all-groups')) return [...new Set(ctx.o.valuesOf('group'))]
  const groups = await getOrRuntime(ctx.admin.listGroups({ types: ['streams'], timeoutMs: ctx.timeoutMs }))
  return groups.map((g) => g.groupId)
}

export async function resetOffsets(ctx: CommandContext, values: ResetValues): Promise<ResetResult> {
  // Dry run unless --execute.
  const dryRun = ctx.o.has('dry-run') || !ctx.o.has('execute')
  const resetter = new OffsetsResetter(ctx, values)
  const result: ResetResult = new Map()
  const groupIds = await groupIdsOf(ctx)
  if (groupIds.length === 0) return result
  const described = ctx.admin.describeStreamsGroups(groupIds, { timeoutMs: ctx.timeoutMs })
  // Kafka walks (and fills its result map) in the hash order of the group ids.
  for (const groupId of javaHashOrder(groupIds, javaStringHash)) {
    let state: string
    try {
      state = (await described.get(groupId)).groupState
    } catch (e) {
      // A group the broker does not know has no members: it is reset as an inactive one.
      if (e instanceof KafkaError && e.errorName === 'GROUP_ID_NOT_FOUND') {
        result.set(groupId, await resetInactiveGroup(ctx, resetter, groupId, dryRun))
        continue
      }
      throw runtimeOfExecution(e)
    }
    if (state === 'Empty' || state === 'Dead') {
      result.set(groupId, await resetInactiveGroup(ctx, resetter, groupId, dryRun))
      if (!dryRun) await deleteInternalTopics(ctx, groupId)
    } else {
      printError(
        ctx.io,
        `Assignments can only be reset if the group '${groupId}' is inactive, but the current state is ${state}.`,
      )
      result.set(groupId, [])
    }
  }
  return result
}

async function resetInactiveGroup(
  ctx: CommandContext,
  resetter: OffsetsResetter,
  groupId: string,
  dryRun: boolean,
): Promise<PlannedOffset[]> {
  const partitions = await partitionsToReset(ctx, resetter, groupId)
  const prepared = await prepareOffsetsToReset(ctx, resetter, groupId, partitions)
  if (!dryRun) {
    try {
      await ctx.admin.alterStreamsGroupOffsets(groupId, prepared, { timeoutMs: ctx.timeoutMs }).all()
    } catch (e) {
      throw rethrownCause(e)
    }
  }
  return prepared
}

/** The scope: every input partition with a committed offset, or the `--input-topic` partitions. */
async function partitionsToReset(ctx: CommandContext, resetter: OffsetsResetter, groupId: string) {
  if (ctx.o.has('all-input-topics')) {
    return [...(await inputTopicOffsets(ctx, groupId)).values()].map((o) => ({
      topic: o.topic,
      partition: o.partition,
    }))
  }
  if (ctx.o.has('input-topic')) {
    let partitions: Array<{ topic: string; partition: number }>
    try {
      partitions = distinct(await resetter.parseTopicPartitionsToReset(ctx.o.valuesOf('input-topic')))
    } catch (e) {
      // Kafka's ExecutionException from DescribeTopics, its KafkaException cause rethrown.
      if (e instanceof KafkaError) throw rethrownCause(e)
      throw e
    }
    await resetter.checkAllTopicPartitionsValid(partitions)
    // Topics that are not the group's are left out, with an error.
    const committed = await getOrRuntime(
      ctx.admin.listStreamsGroupOffsets(groupId, { timeoutMs: ctx.timeoutMs }),
    )
    const present = new Set(committed.map((o) => tpKey(o.topic, o.partition)))
    if (!partitions.every((tp) => present.has(tpKey(tp.topic, tp.partition)))) {
      printError(ctx.io, `One or more topics are not part of the group '${groupId}'.`)
      return []
    }
    return partitions
  }
  if (!ctx.o.has('from-file')) {
    throw new UsageExit('One of the reset scopes should be defined: --all-input-topics, --input-topic.')
  }
  return []
}

async function prepareOffsetsToReset(
  ctx: CommandContext,
  resetter: OffsetsResetter,
  groupId: string,
  partitions: ReadonlyArray<{ topic: string; partition: number }>,
): Promise<PlannedOffset[]> {
  const o = ctx.o
  if (o.has('to-offset')) return resetter.resetToOffset(partitions)
  if (o.has('to-earliest')) return resetter.resetToEarliest(partitions)
  if (o.has('to-latest')) return resetter.resetToLatest(partitions)
  if (o.has('shift-by'))
    return resetter.resetByShiftBy(partitions, currentOffsets(await committedOffsets(ctx, groupId)))
  if (o.has('to-datetime')) return resetter.resetToDateTime(partitions, o.valuesOf('to-datetime')[0]!)
  if (o.has('by-duration')) return resetter.resetByDuration(partitions, o.valueOf('by-duration')!)
  if (o.has('from-file')) {
    const plan = resetter.resetPlanFromFile(o.valuesOf('from-file')[0]!, o.valuesOf('group'))
    return resetter.resetFromFile(groupId, plan)
  }
  if (o.has('to-current'))
    return resetter.resetToCurrent(partitions, currentOffsets(await committedOffsets(ctx, groupId)))
  throw new UsageExit(
    `Option '[reset-offsets]' requires one of the following scenarios: [${RESET_SCENARIOS.map((s) => `[${s}]`).join(', ')}]`,
  )
}

const currentOffsets = (c: ReadonlyMap<string, PlannedOffset>): Map<string, bigint> =>
  new Map([...c].map(([k, v]) => [k, v.offset]))

/** After an executed reset: `--delete-internal-topic` values, or the group's internal topics. */
async function deleteInternalTopics(ctx: CommandContext, groupId: string): Promise<void> {
  let topics: string[] = []
  if (ctx.o.has('delete-all-internal-topics')) {
    // Kafka fails with a NullPointerException when the group has no internal topics (or they
    // could not be retrieved); here there is simply nothing to delete.
    topics = (await retrieveInternalTopics(ctx, [groupId])).get(groupId) ?? []
  } else if (ctx.o.has('delete-internal-topic')) {
    topics = ctx.o.valuesOf('delete-internal-topic')
  }
  if (topics.length === 0) return
  try {
    await deleteTopicsAll(ctx, topics)
  } catch (e) {
    if (e instanceof KafkaError && e.errorName === 'UNKNOWN_TOPIC_OR_PARTITION') {
      printError(
        ctx.io,
        `Deleting internal topics for group '${groupId}' failed because the topics do not exist.`,
      )
    } else if (e instanceof UnsupportedVersionError) {
      printErrorWithTrace(
        ctx.io,
        'Deleting internal topics is not supported by the broker version.\n' +
          `Internal topics: (${topics.join(',')}).\n` +
          "Use 'kafka-topics.sh' to delete the group's internal topics.",
        e,
      )
    } else {
      printErrorWithTrace(
        ctx.io,
        `Deleting internal topics for group '${groupId}' failed due to ${javaToString(e)}`,
        e,
      )
    }
  }
}

const pad = (s: string | number | bigint, w: number): string => String(s).padEnd(w)

/** Kafka's printOffsetsToReset: `%n%-30s %-30s %-10s %-15s` per row, then a newline. */
export function formatOffsetsToReset(result: ResetResult): string {
  const row = (g: string, t: string, p: string | number, o: string | bigint): string =>
    `\n${pad(g, 30)} ${pad(t, 30)} ${pad(p, 10)} ${pad(o, 15)}`
  let out = result.size > 0 ? row('GROUP', 'TOPIC', 'PARTITION', 'NEW-OFFSET') : ''
  for (const [groupId, plan] of result)
    for (const p of plan) out += row(groupId, p.topic, p.partition, p.offset)
  return `${out}\n`
}

/** Kafka's exportOffsetsToCsv: `topic,partition,offset` for one `--group`, else with the group first. */
export function exportOffsetsToCsv(result: ResetResult, singleGroupQuery: boolean): string {
  let out = ''
  for (const [groupId, plan] of result) {
    for (const p of plan) {
      out += singleGroupQuery
        ? csvLine([p.topic, p.partition, p.offset])
        : csvLine([groupId, p.topic, p.partition, p.offset])
    }
  }
  return out
}
