/**
 * Producer ids for InitProducerId without a transactional id: never the same id twice, across
 * restarts included. As Kafka's controller hands out blocks of 1000 ids, this manager reserves a
 * block durably (a small file, written to a temporary file, fsynced and renamed, on libuv's
 * threadpool: an fsync on a busy disk takes hundreds of milliseconds, and the InitProducerId that
 * asks for it is not the only request waiting) before handing out any id of it; a restart
 * continues after the last reserved block, so at most the unused rest of one block is skipped.
 * Kafka: ProducerIdManager, ProducerIdsBlock.
 *
 *   <dir>/producer-id-block   "version: 0\nnext.block.start: <first id of the next block>\n"
 *
 * With no directory (the memory engine) ids are counted in memory from 0.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type FileLayer, NODE_FILE_LAYER, writeFileAtomicLater } from './file-layer.js'

export const PRODUCER_ID_BLOCK_SIZE = 1000
export const PRODUCER_ID_BLOCK_FILE = 'producer-id-block'

export class ProducerIdManager {
  readonly #dir: string | null
  readonly #blockSize: number
  readonly #fs: FileLayer
  /** Next id to hand out and the end (exclusive) of the reserved block. */
  #next = 0
  #end = 0
  #reserving: Promise<void> | null = null
  #opened = false

  /**
   * `dir`: where the block file lives (the first log directory), or null for memory only; `fs`:
   * the file calls of the block's writes (tests count them).
   */
  constructor(dir: string | null, blockSize = PRODUCER_ID_BLOCK_SIZE, fs: FileLayer = NODE_FILE_LAYER) {
    this.#dir = dir
    this.#blockSize = blockSize
    this.#fs = fs
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
      await writeFileAtomicLater(this.#fs, this.#path, Buffer.from(`version: 0\nnext.block.start: ${end}\n`))
    }
    this.#next = start
    this.#end = end
  }

  async close(): Promise<void> {}
}
