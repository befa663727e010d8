/**
 * `kafka-streams-groups --delete`, as Kafka's StreamsGroupCommand deletes groups: the streams
 * groups are listed first, and a group that is not among them, or is neither Empty nor Dead, is
 * refused without being sent (Dead is refused too); the others are deleted (with
 * `--delete-all-internal-topics`, their internal topics are found before and deleted after), and
 * the outcome is printed from Java hash maps, in their order. The exit code is 0 whatever failed.
 */
import { javaHashOrder, javaStringHash } from '../../java-order.js'
import type { KafkaError } from '../../clients/network/errors.js'
import { errorInfo } from '../../protocol/errors.js'
import { retrieveInternalTopics } from './group-topics.js'
import { type CommandContext, getOrRuntime, printError } from './io.js'

/** A group that was not deleted: Java's `toString()` of its exception, and the broker's message. */
interface Failure {
  readonly text: string
  readonly brokerMessage: string | null
}

/**
 * Kafka's preAdminCallChecks: each requested group (first occurrences, in order) against the
 * streams groups ListGroups returns. A listing without a state (an old broker) is not checked.
 */
async function preAdminCallChecks(
  ctx: CommandContext,
  groupIds: readonly string[],
): Promise<Map<string, Failure>> {
  const listings = await getOrRuntime(ctx.admin.listGroups({ types: ['streams'], timeoutMs: ctx.timeoutMs }))
  const failed = new Map<string, Failure>()
  for (const g of new Set(groupIds)) {
    const listing = listings.find((l) => l.groupId === g)
    const fail = (text: string): void => {
      failed.set(g, { text, brokerMessage: null })
    }
    if (listing === undefined) {
      fail(`java.lang.IllegalArgumentException: Group '${g}' does not exist or is not a streams group.`)
      continue
    }
    const state = listing.groupState
    if (state === null || state === '') continue
    // GroupState.parse is case-insensitive; any other state (unknown ones too) is not EMPTY.
    if (state.toLowerCase() === 'dead') {
      fail(`java.lang.IllegalStateException: Streams group '${g}' group state is DEAD.`)
    } else if (state.toLowerCase() !== 'empty') {
      fail(`org.apache.kafka.common.errors.GroupNotEmptyException: Streams group '${g}' is not EMPTY.`)
    }
  }
  return failed
}

/** Kafka prints a broker error with its exception's default text; the broker's own message is kept. */
function brokerFailure(error: KafkaError): Failure {
  const text =
    error.code === null
      ? error.toString()
      : `${error.javaClassName}: ${errorInfo(error.code).message ?? error.message}`
  return { text, brokerMessage: error.brokerMessage }
}

/**
 * Runs `--delete` for the `--group` values, or every streams group with `--all-groups` (a failure to
 * list them is, as each listing here, Kafka's RuntimeException around the ExecutionException).
 */
export async function deleteGroups(ctx: CommandContext): Promise<void> {
  const { admin, io, o, timeoutMs } = ctx
  const groupIds = o.has('all-groups')
    ? (await getOrRuntime(admin.listGroups({ types: ['streams'], timeoutMs }))).map((g) => g.groupId)
    : o.valuesOf('group')
  const preFailures = await preAdminCallChecks(ctx, groupIds)
  const toDelete = groupIds.filter((g) => !preFailures.has(g))
  // Kafka's maps: failures (the refused groups first), successes, internal topics by group.
  const failures: Array<[string, Failure]> = [...preFailures]
  let deleted: string[] = []
  let internalTopics = new Map<string, string[]>()
  let topicFailures = new Map<string, KafkaError>()
  if (toDelete.length > 0) {
    if (o.has('delete-all-internal-topics')) internalTopics = await retrieveInternalTopics(ctx, toDelete)
    const unique = [...new Set(toDelete)]
    const results = await admin.deleteGroups(unique, { timeoutMs }).settled()
    // DeleteStreamsGroupsResult.deletedGroups() is a HashMap; its order is the order of the puts.
    for (const g of javaHashOrder(unique, javaStringHash)) {
      const r = results.get(g)!
      if ('error' in r) failures.push([g, brokerFailure(r.error)])
      else deleted.push(g)
    }
    deleted = javaHashOrder(deleted, javaStringHash)
    topicFailures = await deleteInternalTopicsOf(ctx, deleted, internalTopics)
  }
  const failed = javaHashOrder(failures, ([g]) => javaStringHash(g))
  if (failed.length === 0) {
    io.out(`Deletion of requested streams groups ('${deleted.join("', '")}') was successful.\n`)
  } else {
    printError(io, 'Deletion of some streams groups failed:')
    for (const [g, f] of failed) {
      io.out(`* Group '${g}' could not be deleted due to: ${f.text}\n`)
      if (f.brokerMessage !== null) io.out(`  Error message: ${f.brokerMessage}\n`)
    }
    if (deleted.length > 0) {
      io.out(`\nThese streams groups were deleted successfully: '${deleted.join("', '")}'.\n`)
    }
  }
  if (internalTopics.size > 0 && deleted.length > 0) {
    if (topicFailures.size === 0) {
      const withTopics = deleted.filter((g) => internalTopics.has(g))
      io.out(
        `Deletion of associated internal topics of the streams groups ('${withTopics.join("', '")}') was successful.\n`,
      )
    } else {
      io.out('Deletion of some associated internal topics failed:\n')
      for (const [g, e] of topicFailures) {
        io.out(`* Internal topics of the streams group '${g}' could not be deleted due to: ${e.toString()}\n`)
      }
    }
  }
}

/**
 * Kafka's maybeDeleteInternalTopics: for each deleted group with internal topics, one
 * DeleteTopics; a failure names each topic that could not be deleted and is the group's failure.
 */
async function deleteInternalTopicsOf(
  ctx: CommandContext,
  deleted: readonly string[],
  internalTopics: ReadonlyMap<string, string[]>,
): Promise<Map<string, KafkaError>> {
  const failures = new Map<string, KafkaError>()
  for (const g of deleted) {
    const topics = internalTopics.get(g)
    if (topics === undefined || topics.length === 0) continue
    const settled = await ctx.admin.deleteTopics(topics, { timeoutMs: ctx.timeoutMs }).settled()
    let first: KafkaError | null = null
    for (const t of javaHashOrder([...settled.keys()], javaStringHash)) {
      const r = settled.get(t)!
      if ('error' in r) first ??= r.error
    }
    if (first === null) continue
    for (const t of javaHashOrder([...settled.keys()], javaStringHash)) {
      if ('error' in settled.get(t)!) ctx.io.out(`Failed to delete internal topic: ${t}\n`)
    }
    failures.set(g, first)
  }
  return new Map(javaHashOrder([...failures], ([g]) => javaStringHash(g)))
}
