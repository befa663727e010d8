/**
 * The group coordinator shard's log of group events (members joining, leaving and fenced, epoch
 * bumps, rebalances, deletions), with Kafka's texts so that the lines an operator greps for in a
 * Kafka broker's log read the same here.
 *
 * Only operation handlers and timer operations log, never `replay`: loading a shard is replaying
 * its records, and a restart must not log the history again. Logging changes nothing: no state,
 * no records.
 */
import type { RuntimeLogger } from '../runtime/types.js'

/** Logs nothing: the shard's logger unless one is given. */
export const SILENT_LOGGER: RuntimeLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  isLevelEnabled: () => false,
}

type Level = 'debug' | 'info' | 'warn' | 'error'

/**
 * A logger that can hold its lines back for a while, so that a line written after an operation has
 * run (a protocol conversion, known only once the join succeeded) goes before the lines the
 * operation wrote, in the order Kafka logs them.
 */
export class HoldingLogger implements RuntimeLogger {
  readonly #target: RuntimeLogger
  #held: [Level, object, string][] | null = null

  constructor(target: RuntimeLogger) {
    this.#target = target
  }

  /** From now on, lines are kept until {@link release}. */
  hold(): void {
    this.#held = []
  }

  /** Writes `first`'s lines, then the lines kept since {@link hold}, and stops holding. */
  release(first?: (log: RuntimeLogger) => void): void {
    const held = this.#held
    this.#held = null
    first?.(this.#target)
    for (const [level, obj, msg] of held ?? []) this.#target[level](obj, msg)
  }

  isLevelEnabled(level: 'debug'): boolean {
    return this.#target.isLevelEnabled?.(level) ?? true
  }

  debug(obj: object, msg: string): void {
    this.#write('debug', obj, msg)
  }
  info(obj: object, msg: string): void {
    this.#write('info', obj, msg)
  }
  warn(obj: object, msg: string): void {
    this.#write('warn', obj, msg)
  }
  error(obj: object, msg: string): void {
    this.#write('error', obj, msg)
  }

  #write(level: Level, obj: object, msg: string): void {
    if (this.#held !== null) this.#held.push([level, obj, msg])
    else this.#target[level](obj, msg)
  }
}

/**
 * An offset commit's partitions at DEBUG, one line each with Kafka's text (`transactional` for a
 * TxnOffsetCommit's pending offsets); nothing is built unless DEBUG is on.
 */
export function logCommittedOffsets(
  log: RuntimeLogger,
  groupId: string,
  memberId: string,
  transactional: boolean,
  records: readonly {
    readonly key: { readonly topic: string; readonly partition: number }
    readonly value: { readonly offset: bigint; readonly leaderEpoch: number; readonly topicId: string } | null
  }[],
): void {
  if (records.length === 0 || log.isLevelEnabled?.('debug') === false) return
  const what = transactional ? 'transactional offsets' : 'offsets'
  for (const { key, value } of records) {
    if (value === null) continue
    log.debug(
      { groupId, memberId, topic: key.topic, partition: key.partition, offset: String(value.offset) },
      `[GroupId ${groupId}] Committing ${what} ${value.offset} for partition ${value.topicId}-${key.topic}-${key.partition} from member ${memberId} with leader epoch ${value.leaderEpoch}.`,
    )
  }
}

/**
 * A group found when the shard loaded (Kafka's onLoaded): one INFO line for the group, one DEBUG
 * line per member. Written by the first operation after loading, not by replay.
 */
export function logLoadedGroup(
  log: RuntimeLogger,
  type: 'streams' | 'consumer' | 'classic',
  groupId: string,
  memberIds: readonly string[],
): void {
  log.info(
    { groupId, members: memberIds.length },
    `Loaded ${type} group ${groupId} with ${memberIds.length} members.`,
  )
  for (const memberId of memberIds) {
    log.debug({ groupId, memberId }, `Loaded member ${memberId} in ${type} group ${groupId}.`)
  }
}

/**
 * A member's rebalance timeout fired (streams and consumer groups): Kafka's lines, the member
 * fenced (INFO) or, when it moved on from that epoch meanwhile, the timeout ignored (DEBUG).
 */
export function logRebalanceTimeout(
  log: RuntimeLogger,
  groupId: string,
  memberId: string,
  memberEpoch: number,
  fencedAfterMs: number | null,
): void {
  if (fencedAfterMs === null) {
    log.debug(
      { groupId, memberId, memberEpoch },
      `[GroupId ${groupId}] Ignoring rebalance timeout for ${memberId} because the member is not in epoch ${memberEpoch} anymore.`,
    )
    return
  }
  log.info(
    { groupId, memberId, memberEpoch, rebalanceTimeoutMs: fencedAfterMs, reason: 'rebalance timeout' },
    `[GroupId ${groupId}] Member ${memberId} fenced from the group because it failed to transition from epoch ${memberEpoch} within ${fencedAfterMs}ms.`,
  )
}
