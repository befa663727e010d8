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
export const SILENT_LOGGER: RuntimeLogger = { debug() {}, info() {}, warn() {}, error() {} }
