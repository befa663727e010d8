/**
 * The log cleaner (compaction). Placeholder until the cleaner lands: runOnce does nothing.
 */
import type { Crc32c } from './batch.js'
import type { LogLogger } from './types.js'
import type { PartitionLogImpl } from './partition-log.js'

export interface LogCleanerOptions {
  readonly logs: () => readonly PartitionLogImpl[]
  readonly crc32c: Crc32c
  readonly dedupeBufferSize: number
  readonly maxDecompressedBatchBytes: number
  readonly logger: LogLogger
}

export class LogCleaner {
  readonly #opts: LogCleanerOptions
  constructor(opts: LogCleanerOptions) {
    this.#opts = opts
  }
  async runOnce(_now: number): Promise<void> {
    void this.#opts
  }
  async stop(): Promise<void> {}
}
