/**
 * The transaction coordinator's epoch, written into every transaction marker (transactions.md §2,
 * §8.2). Kafka uses the leader epoch of the `__transaction_state` partition, which grows each time a
 * broker becomes its leader and loads its state; a partition rejects a marker whose coordinator
 * epoch is below the last one it saw for the producer (TRANSACTION_COORDINATOR_FENCED), so markers
 * of a coordinator that lost its state cannot overwrite a newer one's. On one node the state is
 * loaded once per start, so the epoch is a counter raised at every start and kept, like the
 * producer id block, in a small file of the first log directory (written to a temporary file,
 * fsynced and renamed) before any shard loads:
 *
 *   <dir>/transaction-coordinator-epoch   "version: 0\ncoordinator.epoch: <epoch of the last start>\n"
 *
 * The partitions' producer state, which holds the epochs seen, lives in the same directory. With no
 * directory (the memory engine) the partitions start empty too, and the epoch is 0.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { NODE_FILE_LAYER, writeFileAtomic } from '../../log/index.js'

export const COORDINATOR_EPOCH_FILE = 'transaction-coordinator-epoch'

/** The largest epoch (an int32 on the wire); the counter stops there. */
const MAX_COORDINATOR_EPOCH = 2147483647

/**
 * The coordinator epoch of this start: one above the last start's (0 for the first), made durable
 * before it is returned. Throws when the file exists but is not an epoch file.
 */
export function nextCoordinatorEpoch(dir: string | null): number {
  if (dir === null) return 0
  mkdirSync(dir, { recursive: true })
  const path = join(dir, COORDINATOR_EPOCH_FILE)
  let epoch = 0
  if (existsSync(path)) {
    const m = /coordinator\.epoch:\s*(\d+)/.exec(readFileSync(path, 'utf8'))
    if (m === null) throw new Error(`${path} is not a transaction coordinator epoch file`)
    epoch = Math.min(Number(m[1]) + 1, MAX_COORDINATOR_EPOCH)
  }
  writeFileAtomic(NODE_FILE_LAYER, path, Buffer.from(`version: 0\ncoordinator.epoch: ${epoch}\n`))
  return epoch
}
