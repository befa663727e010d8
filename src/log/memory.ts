/**
 * The memory engine: segments as arrays of batches, nothing on disk. For tests and for servers
 * that need no durability. Data belongs to the MemoryLogStorage instance: a LogManager reopened
 * over the same instance sees it again.
 */
import { concatBytes } from './batch.js'
import type {
  AppendBatchInfo,
  AppendBatchSpan,
  LogStorage,
  OpenedPartition,
  PartitionStore,
  SegmentInfo,
  SegmentReplacement,
  SegmentRewrite,
  StoredBatch,
} from './storage.js'
import { type SegmentStats, segmentIndexFor, segmentInfoOf } from './storage.js'

const nothing = (): void => {}

interface MemBatch extends StoredBatch {
  readonly maxTimestamp: number
}

interface MemSegment extends SegmentStats {
  batches: MemBatch[]
}

interface MemPartitionData {
  topicId: string
  segments: MemSegment[]
  logStartOffset: number
  snapshot: { offset: number; bytes: Uint8Array; aborted: Uint8Array | null } | null
  cleanerCheckpoint: number
}

function newSegment(baseOffset: number, now: number): MemSegment {
  return {
    baseOffset,
    nextOffset: baseOffset,
    size: 0,
    maxTimestamp: -1,
    offsetOfMaxTimestamp: -1,
    firstBatchTimestamp: -1,
    createdMs: now,
    batches: [],
  }
}

/** First batch index in a segment with lastOffset ≥ offset. */
function batchIndexFor(batches: readonly MemBatch[], offset: number): number {
  let lo = 0
  let hi = batches.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (batches[mid].lastOffset < offset) lo = mid + 1
    else hi = mid
  }
  return lo
}

class MemoryPartitionStore implements PartitionStore {
  readonly #data: MemPartitionData
  readonly #storage: MemoryLogStorage
  readonly #key: string

  constructor(data: MemPartitionData, storage: MemoryLogStorage, key: string) {
    this.#data = data
    this.#storage = storage
    this.#key = key
  }

  async open(now: number): Promise<OpenedPartition> {
    // A literal, not a push: a pushed-to empty array reserves room for 17 segments.
    if (this.#data.segments.length === 0) this.#data.segments = [newSegment(0, now)]
    return {
      logStartOffset: this.#data.logStartOffset,
      producerSnapshot: this.#data.snapshot,
      recovered: false,
      truncatedBytes: 0,
    }
  }

  get logEndOffset(): number {
    const segs = this.#data.segments
    return segs[segs.length - 1].nextOffset
  }

  get sizeInBytes(): number {
    let n = 0
    for (const s of this.#data.segments) n += s.size
    return n
  }

  segments(): readonly SegmentInfo[] {
    return this.#data.segments.map(segmentInfoOf)
  }

  activeSegment(): SegmentInfo {
    return segmentInfoOf(this.#data.segments[this.#data.segments.length - 1])
  }

  get segmentCount(): number {
    return this.#data.segments.length
  }

  append(batch: Uint8Array, info: AppendBatchInfo): void {
    const segs = this.#data.segments
    const s = segs[segs.length - 1]
    s.batches.push({
      // A copy: the batch may be a view of a request's frame or of a buffer staging writes
      // (PartitionStore.append), a Buffer whose own slice() would be a view.
      bytes: Uint8Array.prototype.slice.call(batch),
      baseOffset: info.baseOffset,
      lastOffset: info.lastOffset,
      maxTimestamp: info.maxTimestamp,
    })
    s.size += batch.byteLength
    s.nextOffset = info.lastOffset + 1
    if (s.firstBatchTimestamp < 0 && s.batches.length === 1) s.firstBatchTimestamp = info.maxTimestamp
    if (info.maxTimestamp > s.maxTimestamp) {
      s.maxTimestamp = info.maxTimestamp
      s.offsetOfMaxTimestamp = info.lastOffset
    }
  }

  appendBatches(chunks: readonly Uint8Array[], spans: readonly AppendBatchSpan[]): void {
    let total = 0
    for (const c of chunks) total += c.byteLength
    const bytes = chunks.length === 1 ? chunks[0] : concatBytes(chunks, total)
    let at = 0
    for (const span of spans) {
      this.append(bytes.subarray(at, at + span.size), span)
      at += span.size
    }
  }

  roll(now: number): void {
    const segs = this.#data.segments
    const active = segs[segs.length - 1]
    if (active.size === 0) return
    segs.push(newSegment(active.nextOffset, now))
  }

  read(offset: number, maxBytes: number, maxOffset: number, minOneMessage: boolean): Uint8Array {
    const segs = this.#data.segments
    for (let si = segmentIndexFor(segs, offset); si < segs.length; si++) {
      const s = segs[si]
      let bi = batchIndexFor(s.batches, offset)
      if (bi >= s.batches.length) continue
      const parts: Uint8Array[] = []
      let total = 0
      for (; bi < s.batches.length; bi++) {
        const b = s.batches[bi]
        if (b.baseOffset >= maxOffset) break
        if (total + b.bytes.byteLength > maxBytes && !(total === 0 && minOneMessage)) break
        parts.push(b.bytes)
        total += b.bytes.byteLength
        if (total >= maxBytes) break
      }
      return concatBytes(parts, total)
    }
    return new Uint8Array(0)
  }

  bytesFrom(offset: number): number {
    const segs = this.#data.segments
    let n = 0
    for (let si = segmentIndexFor(segs, offset); si < segs.length; si++) {
      const s = segs[si]
      if (offset <= s.baseOffset) {
        n += s.size
        continue
      }
      for (let bi = batchIndexFor(s.batches, offset); bi < s.batches.length; bi++)
        n += s.batches[bi].bytes.byteLength
    }
    return n
  }

  *batchesFrom(offset: number): Iterable<StoredBatch> {
    const segs = this.#data.segments
    for (let si = segmentIndexFor(segs, offset); si < segs.length; si++) {
      const s = segs[si]
      for (let bi = batchIndexFor(s.batches, offset); bi < s.batches.length; bi++) yield s.batches[bi]
    }
  }

  timestampLookup(segmentBaseOffset: number, _timestamp: number): number {
    return segmentBaseOffset
  }

  deleteOldestSegments(count: number): void {
    this.#data.segments.splice(0, Math.min(count, this.#data.segments.length - 1))
  }

  async replaceSegment(baseOffset: number, rewrite: SegmentRewrite): Promise<SegmentReplacement> {
    const s = this.#data.segments.find((x) => x.baseOffset === baseOffset)
    if (s === undefined) return 'kept'
    const next: MemSegment = {
      baseOffset,
      nextOffset: s.nextOffset,
      size: 0,
      maxTimestamp: -1,
      offsetOfMaxTimestamp: -1,
      firstBatchTimestamp: -1,
      createdMs: s.createdMs,
      batches: [],
    }
    for await (const b of rewrite.batches) {
      next.batches.push({
        bytes: b.bytes,
        baseOffset: b.info.baseOffset,
        lastOffset: b.info.lastOffset,
        maxTimestamp: b.info.maxTimestamp,
      })
      next.size += b.bytes.byteLength
      if (next.firstBatchTimestamp < 0) next.firstBatchTimestamp = b.info.maxTimestamp
      if (b.info.maxTimestamp > next.maxTimestamp) {
        next.maxTimestamp = b.info.maxTimestamp
        next.offsetOfMaxTimestamp = b.info.lastOffset
      }
    }
    const segs = this.#data.segments
    const i = segs.indexOf(s)
    if (i < 0 || i === segs.length - 1) return 'kept'
    if (next.batches.length === 0 && i > 0) {
      segs.splice(i, 1)
      return 'removed'
    }
    if (!rewrite.changed()) return 'kept'
    segs[i] = next
    return 'replaced'
  }

  cleanerCheckpoint(): number {
    return this.#data.cleanerCheckpoint
  }

  async setCleanerCheckpoint(offset: number): Promise<void> {
    this.#data.cleanerCheckpoint = offset
  }

  async setLogStartOffset(offset: number): Promise<void> {
    this.#data.logStartOffset = offset
  }

  async flush(): Promise<void> {}

  writeBack(): null {
    return null
  }

  async writeProducerSnapshot(offset: number, bytes: Uint8Array, aborted: Uint8Array): Promise<void> {
    this.#data.snapshot = { offset, bytes: bytes.slice(), aborted: aborted.slice() }
  }

  async close(): Promise<void> {}

  async delete(): Promise<void> {
    this.#storage.forget(this.#key, this.#data)
  }
}

export class MemoryLogStorage implements LogStorage {
  readonly #partitions = new Map<string, MemPartitionData>()

  async open(): Promise<{ readonly cleanShutdown: boolean }> {
    return { cleanShutdown: true }
  }

  partition(topic: string, partition: number, topicId: string): PartitionStore {
    const key = `${topic}-${partition}`
    let data = this.#partitions.get(key)
    if (data === undefined || data.topicId !== topicId) {
      data = { topicId, segments: [], logStartOffset: 0, snapshot: null, cleanerCheckpoint: 0 }
      this.#partitions.set(key, data)
    }
    return new MemoryPartitionStore(data, this, key)
  }

  /** Drops a deleted partition's data, unless the key already holds a newer topic's. */
  forget(key: string, data: MemPartitionData): void {
    if (this.#partitions.get(key) === data) this.#partitions.delete(key)
  }

  async storedTopicId(topic: string, partition: number): Promise<string | null> {
    return this.#partitions.get(`${topic}-${partition}`)?.topicId ?? null
  }

  storedPartitions(): { readonly topic: string; readonly partition: number }[] {
    return [...this.#partitions.keys()].map((key) => {
      const i = key.lastIndexOf('-')
      return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) }
    })
  }

  async dirs(): Promise<{ path: string; online: boolean; totalBytes: number; usableBytes: number }[]> {
    return [{ path: 'memory', online: true, totalBytes: -1, usableBytes: -1 }]
  }

  metadataDir(): string | null {
    return null
  }

  /** Reads return the stored batches themselves: nothing is lent. */
  lentReadBytes(): number {
    return 0
  }

  /** Nothing to reserve either. */
  reserveReadBytes(_bytes: number): () => void {
    return nothing
  }

  async checkpoint(): Promise<void> {}

  dirIndexOf(_topic: string, _partition: number): number {
    return 0
  }

  async close(_options?: { readonly clean?: boolean }): Promise<void> {}
}
