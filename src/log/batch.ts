/**
 * The v2 record batch ("magic 2") codec, sans-io: header fields, records, zig-zag varints, and the
 * cutting of a byte string into batches. It does no I/O, reads no clock, and computes no checksum
 * itself: functions that need CRC-32C take it as a parameter (`Crc32c`), so the codec can be reused
 * by clients with any CRC implementation. Layout: Kafka's `DefaultRecordBatch` / `DefaultRecord`.
 *
 *   0 baseOffset int64 | 8 batchLength int32 | 12 partitionLeaderEpoch int32 | 16 magic int8
 *   17 crc uint32 (CRC-32C of bytes 21..end) | 21 attributes int16 | 23 lastOffsetDelta int32
 *   27 baseTimestamp int64 | 35 maxTimestamp int64 | 43 producerId int64 | 51 producerEpoch int16
 *   53 baseSequence int32 | 57 recordsCount int32 | 61 records
 *
 * int64 fields are read as JavaScript numbers: offsets, timestamps and producer ids stay below 2^53
 * in practice; larger values lose precision (they are never produced by this broker).
 */

/** Bytes before `batchLength` counts: baseOffset + batchLength. */
export const LOG_OVERHEAD = 12
/** The fixed header of a v2 batch. */
export const RECORD_BATCH_OVERHEAD = 61
/** Smallest legal `batchLength` value seen by Kafka's batch reader (header up to the magic byte + a v0 message). */
export const MIN_BATCH_LENGTH = 14

export const BASE_OFFSET_OFFSET = 0
export const BATCH_LENGTH_OFFSET = 8
export const PARTITION_LEADER_EPOCH_OFFSET = 12
export const MAGIC_OFFSET = 16
export const CRC_OFFSET = 17
export const ATTRIBUTES_OFFSET = 21
export const LAST_OFFSET_DELTA_OFFSET = 23
export const BASE_TIMESTAMP_OFFSET = 27
export const MAX_TIMESTAMP_OFFSET = 35
export const PRODUCER_ID_OFFSET = 43
export const PRODUCER_EPOCH_OFFSET = 51
export const BASE_SEQUENCE_OFFSET = 53
export const RECORDS_COUNT_OFFSET = 57

export const COMPRESSION_CODEC_MASK = 0x07
export const TIMESTAMP_TYPE_MASK = 0x08
export const TRANSACTIONAL_FLAG_MASK = 0x10
export const CONTROL_FLAG_MASK = 0x20
export const DELETE_HORIZON_FLAG_MASK = 0x40

export const NO_PRODUCER_ID = -1
export const NO_PRODUCER_EPOCH = -1
export const NO_SEQUENCE = -1
export const NO_TIMESTAMP = -1
export const NO_PARTITION_LEADER_EPOCH = -1

/** Compression codec ids as in the batch attributes. */
export const CompressionCodec = Object.freeze({ none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const)
export type CompressionCodecName = keyof typeof CompressionCodec
export const CODEC_NAMES: readonly CompressionCodecName[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd']

/** CRC-32C (Castagnoli) of bytes, unsigned. Injected wherever the codec needs a checksum. */
export type Crc32c = (bytes: Uint8Array) => number

/** A malformed batch or record. `kind` names the Kafka error it maps to. */
export class BatchFormatError extends Error {
  override name = 'BatchFormatError'
  /** corrupt = CORRUPT_MESSAGE (framing, CRC); invalid = INVALID_RECORD (record contents) */
  readonly kind: 'corrupt' | 'invalid'
  constructor(kind: 'corrupt' | 'invalid', message: string) {
    super(message)
    this.kind = kind
  }
}

export interface BatchHeader {
  readonly baseOffset: number
  readonly batchLength: number
  readonly partitionLeaderEpoch: number
  readonly magic: number
  readonly crc: number
  readonly attributes: number
  readonly lastOffsetDelta: number
  readonly baseTimestamp: number
  readonly maxTimestamp: number
  readonly producerId: number
  readonly producerEpoch: number
  readonly baseSequence: number
  readonly recordsCount: number
}

function view(buf: Uint8Array): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
}

// Big-endian reads and writes on the bytes themselves: the append path reads and rewrites a few
// header fields of every batch, and a DataView per access was an allocation each time.

function getInt32(buf: Uint8Array, pos: number): number {
  return (buf[pos] << 24) | (buf[pos + 1] << 16) | (buf[pos + 2] << 8) | buf[pos + 3]
}

function getUint32(buf: Uint8Array, pos: number): number {
  return getInt32(buf, pos) >>> 0
}

function getInt16(buf: Uint8Array, pos: number): number {
  return ((buf[pos] << 24) | (buf[pos + 1] << 16)) >> 16
}

function getInt64(buf: Uint8Array, pos: number): number {
  return getInt32(buf, pos) * 4294967296 + getUint32(buf, pos + 4)
}

function setInt32(buf: Uint8Array, pos: number, value: number): void {
  buf[pos] = value >>> 24
  buf[pos + 1] = value >>> 16
  buf[pos + 2] = value >>> 8
  buf[pos + 3] = value
}

function setInt64(buf: Uint8Array, pos: number, value: number): void {
  const hi = Math.floor(value / 4294967296)
  setInt32(buf, pos, hi)
  setInt32(buf, pos + 4, value - hi * 4294967296)
}

/** Reads the 61-byte header at `pos` (the caller checked there are 61 bytes and magic 2). */
export function readBatchHeader(buf: Uint8Array, pos = 0): BatchHeader {
  return {
    baseOffset: getInt64(buf, pos),
    batchLength: getInt32(buf, pos + BATCH_LENGTH_OFFSET),
    partitionLeaderEpoch: getInt32(buf, pos + PARTITION_LEADER_EPOCH_OFFSET),
    magic: (buf[pos + MAGIC_OFFSET] << 24) >> 24,
    crc: getUint32(buf, pos + CRC_OFFSET),
    attributes: getInt16(buf, pos + ATTRIBUTES_OFFSET),
    lastOffsetDelta: getInt32(buf, pos + LAST_OFFSET_DELTA_OFFSET),
    baseTimestamp: getInt64(buf, pos + BASE_TIMESTAMP_OFFSET),
    maxTimestamp: getInt64(buf, pos + MAX_TIMESTAMP_OFFSET),
    producerId: getInt64(buf, pos + PRODUCER_ID_OFFSET),
    producerEpoch: getInt16(buf, pos + PRODUCER_EPOCH_OFFSET),
    baseSequence: getInt32(buf, pos + BASE_SEQUENCE_OFFSET),
    recordsCount: getInt32(buf, pos + RECORDS_COUNT_OFFSET),
  }
}

/** Rewrites the base offset of the batch at `pos` (outside the CRC). */
export function setBaseOffset(buf: Uint8Array, pos: number, baseOffset: number): void {
  setInt64(buf, pos + BASE_OFFSET_OFFSET, baseOffset)
}

/** Rewrites the partition leader epoch of the batch at `pos` (outside the CRC). */
export function setPartitionLeaderEpoch(buf: Uint8Array, pos: number, epoch: number): void {
  setInt32(buf, pos + PARTITION_LEADER_EPOCH_OFFSET, epoch)
}

/**
 * Rewrites maxTimestamp (and the timestamp-type bit when `logAppendTime`), then the CRC: both are
 * inside the checksummed range.
 */
export function setMaxTimestamp(
  buf: Uint8Array,
  pos: number,
  maxTimestamp: number,
  logAppendTime: boolean,
  crc32c: Crc32c,
): void {
  setInt64(buf, pos + MAX_TIMESTAMP_OFFSET, maxTimestamp)
  if (logAppendTime) buf[pos + ATTRIBUTES_OFFSET + 1] |= TIMESTAMP_TYPE_MASK
  writeCrc(buf, pos, crc32c)
}

/** Size of the whole batch at `pos`: batchLength + 12. */
export function batchSize(buf: Uint8Array, pos = 0): number {
  return getInt32(buf, pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD
}

/** The CRC the batch at `pos` should carry. */
export function computeCrc(buf: Uint8Array, pos: number, crc32c: Crc32c): number {
  const end = pos + batchSize(buf, pos)
  return crc32c(buf.subarray(pos + ATTRIBUTES_OFFSET, end)) >>> 0
}

export function writeCrc(buf: Uint8Array, pos: number, crc32c: Crc32c): void {
  setInt32(buf, pos + CRC_OFFSET, computeCrc(buf, pos, crc32c))
}

export function isCrcValid(buf: Uint8Array, pos: number, crc32c: Crc32c): boolean {
  return getUint32(buf, pos + CRC_OFFSET) === computeCrc(buf, pos, crc32c)
}

export function lastOffsetOf(h: BatchHeader): number {
  return h.baseOffset + h.lastOffsetDelta
}

export function codecOf(attributes: number): number {
  return attributes & COMPRESSION_CODEC_MASK
}
export function isTransactional(attributes: number): boolean {
  return (attributes & TRANSACTIONAL_FLAG_MASK) !== 0
}
export function isControl(attributes: number): boolean {
  return (attributes & CONTROL_FLAG_MASK) !== 0
}
export function isLogAppendTime(attributes: number): boolean {
  return (attributes & TIMESTAMP_TYPE_MASK) !== 0
}
export function hasDeleteHorizon(attributes: number): boolean {
  return (attributes & DELETE_HORIZON_FLAG_MASK) !== 0
}

/** `baseSequence + delta` wrapping past 2147483647 to 0, as Kafka's `incrementSequence`. */
export function incrementSequence(sequence: number, increment: number): number {
  if (sequence > 2147483647 - increment) return increment - (2147483647 - sequence) - 1
  return sequence + increment
}

export function lastSequenceOf(h: BatchHeader): number {
  return h.baseSequence === NO_SEQUENCE ? NO_SEQUENCE : incrementSequence(h.baseSequence, h.lastOffsetDelta)
}

/**
 * Where the batch at `pos` ends, or: 'partial' when the bytes end before a whole batch (a header
 * shorter than 17 bytes or a body cut short), or a BatchFormatError('corrupt') for a length below
 * the minimum or a magic byte outside 0..2 (Kafka's `ByteBufferLogInputStream`).
 */
export function nextBatchEnd(buf: Uint8Array, pos: number): number | 'partial' {
  const left = buf.byteLength - pos
  if (left < LOG_OVERHEAD) return 'partial'
  const length = getInt32(buf, pos + BATCH_LENGTH_OFFSET)
  if (length < MIN_BATCH_LENGTH) {
    throw new BatchFormatError(
      'corrupt',
      `Record size ${length} is less than the minimum record overhead (${MIN_BATCH_LENGTH})`,
    )
  }
  if (left < LOG_OVERHEAD + length) return 'partial'
  if (left < MAGIC_OFFSET + 1) return 'partial'
  const magic = (buf[pos + MAGIC_OFFSET] << 24) >> 24
  if (magic < 0 || magic > 2) throw new BatchFormatError('corrupt', `Invalid magic found in record: ${magic}`)
  return pos + LOG_OVERHEAD + length
}

/** Positions of the whole batches in `buf` and where the complete ones end (trailing bytes ignored). */
export function splitBatches(buf: Uint8Array): { readonly positions: number[]; readonly end: number } {
  const positions: number[] = []
  let pos = 0
  for (;;) {
    const next = nextBatchEnd(buf, pos)
    if (next === 'partial') break
    positions.push(pos)
    pos = next
  }
  return { positions, end: pos }
}

// ---- varints (zig-zag, 7 bits per byte, least significant group first) ----

/** Reads zig-zag varints and varlongs from a byte array; throws BatchFormatError('invalid') past the end. */
export class VarReader {
  readonly buf: Uint8Array
  pos: number
  /** Where reading stops; a reader may be moved to another range (`pos` and `end` both set). */
  end: number
  constructor(buf: Uint8Array, pos = 0, end = buf.byteLength) {
    this.buf = buf
    this.pos = pos
    this.end = end
  }

  #underflow(): never {
    throw new BatchFormatError('invalid', 'Found invalid record count or size in record data')
  }

  readVarint(): number {
    let value = 0
    let shift = 0
    for (let i = 0; i < 5; i++) {
      if (this.pos >= this.end) this.#underflow()
      const b = this.buf[this.pos++]
      value |= (b & 0x7f) << shift
      if ((b & 0x80) === 0) return (value >>> 1) ^ -(value & 1)
      shift += 7
    }
    throw new BatchFormatError(
      'invalid',
      'Varint is too long, the most significant bit in the 5th byte is set',
    )
  }

  /** A zig-zag varlong as a number (exact up to 2^53). */
  readVarlong(): number {
    // Up to 7 bytes (49 bits, every timestamp delta in practice) in plain arithmetic; longer ones
    // through BigInt.
    const start = this.pos
    let value = 0
    let scale = 1
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.end) this.#underflow()
      const b = this.buf[this.pos++]
      value += (b & 0x7f) * scale
      if ((b & 0x80) === 0) return value % 2 === 0 ? value / 2 : -(value + 1) / 2
      scale *= 128
    }
    this.pos = start
    let lo = 0n
    let shift = 0n
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) this.#underflow()
      const b = this.buf[this.pos++]
      lo |= BigInt(b & 0x7f) << shift
      if ((b & 0x80) === 0) return Number((lo >> 1n) ^ -(lo & 1n))
      shift += 7n
    }
    throw new BatchFormatError('invalid', 'Varlong is too long, most significant bit in the 10th byte is set')
  }

  readInt8(): number {
    if (this.pos >= this.end) this.#underflow()
    const b = this.buf[this.pos++]
    return b > 127 ? b - 256 : b
  }

  readBytes(n: number): Uint8Array {
    if (n > this.end - this.pos) this.#underflow()
    const out = this.buf.subarray(this.pos, this.pos + n)
    this.pos += n
    return out
  }

  /** Moves past `n` bytes (as readBytes, without the view). */
  advance(n: number): void {
    if (n > this.end - this.pos) this.#underflow()
    this.pos += n
  }
}

/** Bytes needed for a zig-zag varint. */
export function sizeOfVarint(value: number): number {
  let v = ((value << 1) ^ (value >> 31)) >>> 0
  let n = 1
  while (v >= 0x80) {
    v >>>= 7
    n++
  }
  return n
}

/** Bytes needed for a zig-zag varlong (an int32 takes as many as its varint). */
export function sizeOfVarlong(value: number): number {
  if ((value | 0) === value) return sizeOfVarint(value)
  const big = BigInt(value)
  let v = BigInt.asUintN(64, (big << 1n) ^ (big >> 63n))
  let n = 1
  while (v >= 0x80n) {
    v >>= 7n
    n++
  }
  return n
}

/** Writes a zig-zag varint into `buf` at `pos` (room assumed); returns the position after it. */
export function putVarint(buf: Uint8Array, pos: number, value: number): number {
  let v = ((value << 1) ^ (value >> 31)) >>> 0
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80
    v >>>= 7
  }
  buf[pos++] = v
  return pos
}

/** Writes a zig-zag varlong into `buf` at `pos` (room assumed); returns the position after it. */
function putVarlong(buf: Uint8Array, pos: number, value: number): number {
  // Within int32 the zig-zag varlong's bytes are the zig-zag varint's.
  if ((value | 0) === value) return putVarint(buf, pos, value)
  const big = BigInt(value)
  let v = BigInt.asUintN(64, (big << 1n) ^ (big >> 63n))
  while (v >= 0x80n) {
    buf[pos++] = Number(v & 0x7fn) | 0x80
    v >>= 7n
  }
  buf[pos++] = Number(v)
  return pos
}

/** A growable byte buffer for building records and batches. */
export class ByteSink {
  #buf: Uint8Array
  #len = 0
  constructor(capacity = 256) {
    this.#buf = new Uint8Array(capacity)
  }
  get length(): number {
    return this.#len
  }
  #ensure(n: number): void {
    if (this.#len + n <= this.#buf.byteLength) return
    let cap = this.#buf.byteLength * 2
    while (cap < this.#len + n) cap *= 2
    const next = new Uint8Array(cap)
    next.set(this.#buf.subarray(0, this.#len))
    this.#buf = next
  }
  writeByte(b: number): void {
    this.#ensure(1)
    this.#buf[this.#len++] = b & 0xff
  }
  writeBytes(b: Uint8Array): void {
    this.#ensure(b.byteLength)
    this.#buf.set(b, this.#len)
    this.#len += b.byteLength
  }
  writeVarint(value: number): void {
    this.#ensure(5)
    this.#len = putVarint(this.#buf, this.#len, value)
  }
  /**
   * Room for `n` more bytes: the buffer to write them into from `length` on (valid until the next
   * write); `advance(n)` then counts them as written.
   */
  reserve(n: number): Uint8Array {
    this.#ensure(n)
    return this.#buf
  }
  advance(n: number): void {
    this.#len += n
  }
  writeVarlong(value: number): void {
    this.#ensure(10)
    this.#len = putVarlong(this.#buf, this.#len, value)
  }
  /** Empties the sink for reuse (its buffer stays). */
  reset(): void {
    this.#len = 0
  }
  /** The bytes written so far (a view; valid until the next write). */
  view(): Uint8Array {
    return this.#buf.subarray(0, this.#len)
  }
  finish(): Uint8Array {
    return this.#buf.slice(0, this.#len)
  }
}

// ---- records ----

export interface RecordHeader {
  readonly key: string
  readonly value: Uint8Array | null
}

export interface BatchRecord {
  readonly attributes: number
  readonly timestampDelta: number
  readonly offsetDelta: number
  readonly key: Uint8Array | null
  readonly value: Uint8Array | null
  readonly headers: readonly RecordHeader[]
  /** Encoded size of the record including its length prefix. */
  readonly sizeInBytes: number
}

const utf8 = new TextDecoder('utf-8', { fatal: false })
/** The headers of every record without any (most): one shared, frozen list. */
const NO_HEADERS = Object.freeze([]) as unknown as RecordHeader[]
const utf8enc = new TextEncoder()

/** Decodes one record at the reader's position. Errors are INVALID_RECORD, with Kafka's texts. */
export function readRecord(r: VarReader): BatchRecord {
  const start = r.pos
  const length = r.readVarint()
  if (length < 0)
    throw new BatchFormatError('invalid', `Invalid record size: expected a non-negative size, got ${length}`)
  const bodyStart = r.pos
  if (length > r.end - bodyStart)
    throw new BatchFormatError(
      'invalid',
      `Invalid record size: expected ${length} bytes in record payload, but the record payload reached EOF.`,
    )
  const body = new VarReader(r.buf, bodyStart, bodyStart + length)
  const attributes = body.readInt8()
  const timestampDelta = body.readVarlong()
  const offsetDelta = body.readVarint()
  const keyLength = body.readVarint()
  const key = keyLength < 0 ? null : body.readBytes(keyLength)
  const valueLength = body.readVarint()
  const value = valueLength < 0 ? null : body.readBytes(valueLength)
  const headerCount = body.readVarint()
  if (headerCount < 0)
    throw new BatchFormatError('invalid', `Found invalid number of record headers ${headerCount}`)
  if (headerCount > body.end - body.pos)
    throw new BatchFormatError('invalid', `Found invalid number of record headers ${headerCount}`)
  const headers: RecordHeader[] = headerCount === 0 ? NO_HEADERS : []
  for (let i = 0; i < headerCount; i++) {
    const hkLen = body.readVarint()
    if (hkLen < 0) throw new BatchFormatError('invalid', `Invalid negative header key size ${hkLen}`)
    const hk = utf8.decode(body.readBytes(hkLen))
    const hvLen = body.readVarint()
    headers.push({ key: hk, value: hvLen < 0 ? null : body.readBytes(hvLen) })
  }
  if (body.pos !== body.end) {
    throw new BatchFormatError(
      'invalid',
      `Invalid record size: expected to read ${length} bytes in record payload, but instead read ${body.pos - bodyStart}`,
    )
  }
  r.pos = body.end
  return { attributes, timestampDelta, offsetDelta, key, value, headers, sizeInBytes: r.pos - start }
}

/**
 * Decodes exactly `count` records from `body` (the plaintext records of a batch). Errors are
 * INVALID_RECORD: a record that does not parse, or bytes left over / missing.
 */
export function decodeRecords(body: Uint8Array, count: number): BatchRecord[] {
  const r = new VarReader(body)
  const out: BatchRecord[] = []
  for (let i = 0; i < count; i++) {
    if (r.pos >= r.end) {
      throw new BatchFormatError('invalid', `Incorrect declared batch size, records still remaining in file`)
    }
    out.push(readRecord(r))
  }
  if (r.pos !== r.end) {
    throw new BatchFormatError('invalid', `Incorrect declared batch size, premature EOF reached`)
  }
  return out
}

export interface RecordInput {
  readonly timestampDelta: number
  readonly offsetDelta: number
  readonly key: Uint8Array | null
  readonly value: Uint8Array | null
  readonly headers?: readonly RecordHeader[]
}

/** Appends one encoded record to `sink`. */
export function writeRecord(sink: ByteSink, rec: RecordInput): void {
  // The body's length comes first, so it is counted before anything is written: no second buffer.
  const keyLength = rec.key === null ? -1 : rec.key.byteLength
  const valueLength = rec.value === null ? -1 : rec.value.byteLength
  const headers = rec.headers ?? NO_HEADERS
  let length =
    1 +
    sizeOfVarlong(rec.timestampDelta) +
    sizeOfVarint(rec.offsetDelta) +
    sizeOfVarint(keyLength) +
    Math.max(keyLength, 0) +
    sizeOfVarint(valueLength) +
    Math.max(valueLength, 0) +
    sizeOfVarint(headers.length)
  let headerKeys: Uint8Array[] | undefined
  if (headers.length > 0) {
    headerKeys = headers.map((h) => utf8enc.encode(h.key))
    for (let i = 0; i < headers.length; i++) {
      const hv = headers[i].value
      length += sizeOfVarint(headerKeys[i].byteLength) + headerKeys[i].byteLength
      length += hv === null ? sizeOfVarint(-1) : sizeOfVarint(hv.byteLength) + hv.byteLength
    }
  }
  // One reservation, then the fields straight into the buffer.
  const total = sizeOfVarint(length) + length
  const buf = sink.reserve(total)
  const start = sink.length
  let p = putVarint(buf, start, length)
  buf[p++] = 0
  p = putVarlong(buf, p, rec.timestampDelta)
  p = putVarint(buf, p, rec.offsetDelta)
  p = putVarint(buf, p, keyLength)
  if (rec.key !== null) {
    buf.set(rec.key, p)
    p += keyLength
  }
  p = putVarint(buf, p, valueLength)
  if (rec.value !== null) {
    buf.set(rec.value, p)
    p += valueLength
  }
  p = putVarint(buf, p, headers.length)
  for (let i = 0; i < headers.length; i++) {
    const k = (headerKeys as Uint8Array[])[i]
    p = putVarint(buf, p, k.byteLength)
    buf.set(k, p)
    p += k.byteLength
    const hv = headers[i].value
    if (hv === null) p = putVarint(buf, p, -1)
    else {
      p = putVarint(buf, p, hv.byteLength)
      buf.set(hv, p)
      p += hv.byteLength
    }
  }
  sink.advance(p - start)
}

/** Encodes records back to back (the plaintext of a batch body). */
export function encodeRecords(records: readonly RecordInput[]): Uint8Array {
  const sink = new ByteSink(256)
  for (const r of records) writeRecord(sink, r)
  return sink.finish()
}

export interface BatchFields {
  readonly baseOffset?: number
  readonly partitionLeaderEpoch?: number
  readonly attributes: number
  readonly lastOffsetDelta: number
  readonly baseTimestamp: number
  readonly maxTimestamp: number
  readonly producerId?: number
  readonly producerEpoch?: number
  readonly baseSequence?: number
  readonly recordsCount: number
}

/**
 * Builds a whole batch from its header fields and its (already compressed, when the attributes
 * name a codec) records body, with a correct CRC.
 */
export function buildBatch(fields: BatchFields, body: Uint8Array, crc32c: Crc32c): Uint8Array {
  const out = new Uint8Array(RECORD_BATCH_OVERHEAD + body.byteLength)
  const dv = view(out)
  setInt64(out, BASE_OFFSET_OFFSET, fields.baseOffset ?? 0)
  dv.setInt32(BATCH_LENGTH_OFFSET, out.byteLength - LOG_OVERHEAD)
  dv.setInt32(PARTITION_LEADER_EPOCH_OFFSET, fields.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH)
  dv.setInt8(MAGIC_OFFSET, 2)
  dv.setInt16(ATTRIBUTES_OFFSET, fields.attributes)
  dv.setInt32(LAST_OFFSET_DELTA_OFFSET, fields.lastOffsetDelta)
  setInt64(out, BASE_TIMESTAMP_OFFSET, fields.baseTimestamp)
  setInt64(out, MAX_TIMESTAMP_OFFSET, fields.maxTimestamp)
  setInt64(out, PRODUCER_ID_OFFSET, fields.producerId ?? NO_PRODUCER_ID)
  dv.setInt16(PRODUCER_EPOCH_OFFSET, fields.producerEpoch ?? NO_PRODUCER_EPOCH)
  dv.setInt32(BASE_SEQUENCE_OFFSET, fields.baseSequence ?? NO_SEQUENCE)
  dv.setInt32(RECORDS_COUNT_OFFSET, fields.recordsCount)
  out.set(body, RECORD_BATCH_OVERHEAD)
  writeCrc(out, 0, crc32c)
  return out
}

/** The records body (bytes 61..end) of the batch at `pos`, as stored (compressed or not). */
export function batchBody(buf: Uint8Array, pos = 0): Uint8Array {
  return buf.subarray(pos + RECORD_BATCH_OVERHEAD, pos + batchSize(buf, pos))
}

/** A record's absolute timestamp as a reader sees it (LogAppendTime: the batch's maxTimestamp). */
export function recordTimestamp(h: BatchHeader, rec: BatchRecord): number {
  if (isLogAppendTime(h.attributes)) return h.maxTimestamp
  return h.baseTimestamp + rec.timestampDelta
}

/** The parts joined into one array of `total` bytes. */
export function concatBytes(parts: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total)
  let pos = 0
  for (const p of parts) {
    out.set(p, pos)
    pos += p.byteLength
  }
  return out
}

/** A UTF-8 string of bytes, or null. */
export function utf8Decode(b: Uint8Array | null): string | null {
  return b === null ? null : utf8.decode(b)
}
