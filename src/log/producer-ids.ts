/**
 * Producer ids for InitProducerId without a transactional id: never the same id twice, across
 * restarts included. As Kafka's controller hands out blocks of 1000 ids, this manager reserves a
 * block durably (a small file, written to a temporary file, fsynced and renamed) before handing out
 * any id of it; a restart continues after the last reserved block, so at most the unused rest of
 * one block is skipped. Kafka: ProducerIdManager, ProducerIdsBlock.
 *
 *   <dir>/producer-id-block   "version: 0\nnext.block.start: <first id of the next block>\n"
 *
 * With no directory (the memory engine) ids are counted in memory from 0.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'

export const PRODUCER_ID_BLOCK_SIZE = 1000
export const PRODUCER_ID_BLOCK_FILE = 'producer-id-block'

export class ProducerIdManager {
  readonly #dir: string | null
  readonly #blockSize: number
  /** Next id to hand out and the end (exclusive) of the reserved block. */
  #next = 0
  #end = 0
  #reserving: Promise<void> | null = null
  #opened = false

  /** `dir`: where the block file lives (the first log directory), or null for memory only. */
  constructor(dir: string | null, blockSize = PRODUCER_ID_BLOCK_SIZE) {
    this.#dir = dir
    this.#blockSize = blockSize
  }

  get #path(): string {
    return join(this.#dir!, PRODUCER_ID_BLOCK_FILE)
  }

  async open(): Promise<void> {
    if (this.#opened) return
    this.#opened = true
    if (this.#dir === null) return
    mkdirSync(this.#dir, { recursive: true })
    if (existsSync(this.#path)) {
      const m = /next\.block\.start:\s*(\d+)/.exec(readFileSync(this.#path, 'utf8'))
      if (m === null) throw new Error(`${this.#path} is not a producer id block file`)
      this.#next = Number(m[1])
      this.#end = this.#next
    }
  }

  /** The next producer id (reserving a new block first when the current one is used up). */
  async next(): Promise<number> {
    if (!this.#opened) await this.open()
    while (this.#next >= this.#end) {
      this.#reserving ??= this.#reserve().finally(() => {
        this.#reserving = null
      })
      await this.#reserving
    }
    return this.#next++
  }

  async #reserve(): Promise<void> {
    const start = this.#end
    const end = start + this.#blockSize
    if (this.#dir !== null) {
      writeSmallFileDurably(this.#path, `version: 0\nnext.block.start: ${end}\n`)
    }
    this.#next = start
    this.#end = end
  }

  async close(): Promise<void> {}
}

/**
 * Replaces a small file so that a crash leaves either the old or the new content: written to
 * `<path>.tmp`, fsynced, then renamed over `path`.
 */
export function writeSmallFileDurably(path: string, content: string): void {
  const tmp = `${path}.tmp`
  const fd = openSync(tmp, 'w')
  try {
    writeSync(fd, content)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, path)
}
