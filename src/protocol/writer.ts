import { Buffer } from 'node:buffer'
import { EncodeError } from './errors-codec.js'
import type { TaggedField } from './reader.js'

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA'

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

function outOfRange(type: string, v: number | bigint): EncodeError {
  return new EncodeError('VALUE_OUT_OF_RANGE', `${type} out of range: ${v}`)
}

/**
 * Small buffers come from Node's shared allocation pool (Buffer.allocUnsafe), so most writers write
 * into the same ArrayBuffer: one DataView over it is kept and reused (a DataView costs about 130 ns
 * to construct on Node 20, as the Reader notes). A buffer of its own (larger than the pool) gets its
 * own view; ArrayBuffers above CACHE_MAX bytes are not kept.
 */
const CACHE_MAX = 1 << 20
let cachedAb: ArrayBufferLike | undefined
let cachedDv: DataView | undefined

/** The cached view of `buf`'s whole ArrayBuffer, or (not cached) a view of `buf` alone. */
function viewOf(buf: Buffer): DataView {
  const ab = buf.buffer
  if (ab === cachedAb) return cachedDv!
  if (ab.byteLength > CACHE_MAX) return new DataView(ab, buf.byteOffset, buf.byteLength)
  cachedAb = ab
  cachedDv = new DataView(ab)
  return cachedDv
}

/** Number of bytes of `n` as an unsigned varint. */
export function uvarintSize(n: number): number {
  if (n < 0x80) return 1
  if (n < 0x4000) return 2
  if (n < 0x200000) return 3
  if (n < 0x10000000) return 4
  return 5
}

/** A records field the writer refers to instead of copying: `bytes` go in front of buffer position `at`. */
interface Reference {
  at: number
  readonly bytes: Uint8Array
}

/**
 * A growable output buffer for Kafka primitives. Length prefixes are reserved and back-patched
 * (`reserveInt32`/`patchInt32`, `beginUVarintSized`/`endUVarintSized`), so nothing is encoded twice.
 * `finish()` returns a view of the internal buffer (no copy); start a new Writer for the next message.
 *
 * A writer made with `referenceRecordsFrom` does not copy a records field of at least that many
 * bytes (a Fetch answer's batches, up to a MiB per partition): it keeps a reference to it, and
 * `finishChunks()` returns the message as the writer's own bytes with those references between
 * them, in order, for a gathering socket write. `length` counts them; `finish()` still returns one
 * buffer (copying them in). The referenced bytes must not change until the chunks are written.
 */
export class Writer {
  #buf: Buffer
  // Numbers go through a DataView: on Node 20 its setters are compiler intrinsics, several times
  // faster than Buffer's writeInt32BE family (measured in bench/codec).
  #dv: DataView
  // #dv may cover the whole ArrayBuffer behind #buf: offset o of #buf is #base + o in it
  #base: number
  #pos: number
  /** Where the message starts in #buf (0 unless written into a caller's buffer, see `resetInto`). */
  #start = 0
  readonly #referenceFrom: number
  /** Records fields referred to, in writing order; null until the first. */
  #refs: Reference[] | null = null
  /** Their bytes in all. */
  #refBytes = 0
  /** For each open `beginUVarintSized`, how many references were taken before it. */
  #sizedRefs: number[] | null = null

  /**
   * `referenceRecordsFrom`: records fields of at least this many bytes are referred to, not copied
   * (see {@link Writer}); by default every field is copied.
   */
  constructor(initialCapacity = 256, referenceRecordsFrom = Number.POSITIVE_INFINITY) {
    this.#buf = Buffer.allocUnsafe(initialCapacity)
    this.#dv = viewOf(this.#buf)
    this.#base = this.#dv === cachedDv ? this.#buf.byteOffset : 0
    this.#pos = 0
    this.#referenceFrom = referenceRecordsFrom
  }

  /**
   * Bytes of the message so far, referred records fields included. A size, not a position: the
   * positions `reserveInt32` returns and `patchInt32` takes are in `buffer`, where the message
   * starts at `start` (not 0 when written into a caller's buffer).
   */
  get length(): number {
    return this.#pos - this.#start + this.#refBytes
  }

  /**
   * Writes the next message into `buf` from offset `at` on, as a new Writer would write it into a
   * buffer of its own: a caller that keeps one buffer for many messages (a connection's answers)
   * reuses the writer and the buffer. `view` is a DataView over the whole of `buf`'s ArrayBuffer,
   * when the caller keeps one. A message that does not fit moves to a larger buffer of the writer's
   * own (`buffer` is then no longer `buf`); its offsets stay as they were.
   */
  resetInto(buf: Buffer, at: number, view?: DataView): void {
    this.#buf = buf
    if (view !== undefined) {
      this.#dv = view
      this.#base = buf.byteOffset
    } else {
      this.#dv = viewOf(buf)
      this.#base = this.#dv === cachedDv ? buf.byteOffset : 0
    }
    this.#pos = at
    this.#start = at
    this.#refs = null
    this.#refBytes = 0
    if (this.#sizedRefs !== null) this.#sizedRefs.length = 0
  }

  /** The buffer the message is in: bytes [start, end) of it, without referred records fields. */
  get buffer(): Buffer {
    return this.#buf
  }
  get start(): number {
    return this.#start
  }
  get end(): number {
    return this.#pos
  }
  /** Whether a records field was referred to rather than copied (see {@link Writer}). */
  get refersToRecords(): boolean {
    return this.#refs !== null
  }

  #ensure(n: number): void {
    const need = this.#pos + n
    if (need <= this.#buf.length) return
    let cap = this.#buf.length * 2
    while (cap < need) cap *= 2
    const next = Buffer.allocUnsafe(cap)
    this.#buf.copy(next, this.#start, this.#start, this.#pos)
    this.#buf = next
    this.#dv = viewOf(next)
    this.#base = this.#dv === cachedDv ? next.byteOffset : 0
  }

  /**
   * Makes room for `n` more bytes at once: a caller that knows the size of what it writes (cached
   * encoded parts) grows the buffer once instead of doubling it step by step.
   */
  reserve(n: number): void {
    this.#ensure(n)
  }

  /**
   * The bytes written so far, as a view of the internal buffer (one buffer with the referred
   * records fields copied in, when there are any).
   */
  finish(): Buffer {
    const refs = this.#refs
    if (refs === null) return this.#buf.subarray(this.#start, this.#pos)
    return Buffer.concat(this.finishChunks(), this.length)
  }

  /**
   * The message as chunks to be written in order: views of the internal buffer and, between them,
   * the referred records fields (not copied). One chunk when nothing was referred to.
   */
  finishChunks(): Buffer[] {
    const refs = this.#refs
    const buf = this.#buf
    if (refs === null) return [buf.subarray(this.#start, this.#pos)]
    const out: Buffer[] = []
    let from = this.#start
    for (const r of refs) {
      if (r.at > from) out.push(buf.subarray(from, r.at))
      from = r.at
      const b = r.bytes
      out.push(Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength))
    }
    if (this.#pos > from) out.push(buf.subarray(from, this.#pos))
    return out
  }

  writeInt8(v: number): void {
    if ((v << 24) >> 24 !== v) throw outOfRange('int8', v)
    this.#ensure(1)
    this.#dv.setInt8(this.#base + this.#pos, v)
    this.#pos += 1
  }
  writeBool(v: boolean): void {
    this.#ensure(1)
    this.#buf[this.#pos++] = v ? 1 : 0
  }
  writeInt16(v: number): void {
    if ((v << 16) >> 16 !== v) throw outOfRange('int16', v)
    this.#ensure(2)
    this.#dv.setInt16(this.#base + this.#pos, v)
    this.#pos += 2
  }
  writeUInt16(v: number): void {
    if ((v & 0xffff) !== v) throw outOfRange('uint16', v)
    this.#ensure(2)
    this.#dv.setUint16(this.#base + this.#pos, v)
    this.#pos += 2
  }
  writeInt32(v: number): void {
    if ((v | 0) !== v) throw outOfRange('int32', v)
    this.#ensure(4)
    this.#dv.setInt32(this.#base + this.#pos, v)
    this.#pos += 4
  }
  writeInt64(v: bigint): void {
    if (v < INT64_MIN || v > INT64_MAX) throw outOfRange('int64', v)
    this.#ensure(8)
    this.#dv.setBigInt64(this.#base + this.#pos, v)
    this.#pos += 8
  }
  writeFloat64(v: number): void {
    this.#ensure(8)
    this.#dv.setFloat64(this.#base + this.#pos, v)
    this.#pos += 8
  }
  writeUuid(v: string): void {
    this.#ensure(16)
    if (v === ZERO_UUID) {
      this.#buf.fill(0, this.#pos, this.#pos + 16)
    } else {
      if (v.length !== 22) throw new EncodeError('INVALID_UUID', `not a base64url uuid: ${JSON.stringify(v)}`)
      const n = this.#buf.write(v, this.#pos, 16, 'base64url')
      if (n !== 16) throw new EncodeError('INVALID_UUID', `not a base64url uuid: ${JSON.stringify(v)}`)
    }
    this.#pos += 16
  }
  writeUVarint(v: number): void {
    this.#ensure(5)
    const b = this.#buf
    let p = this.#pos
    let n = v >>> 0
    if (n !== v) throw new EncodeError('VALUE_OUT_OF_RANGE', `unsigned varint out of range: ${v}`)
    while (n >= 0x80) {
      b[p++] = (n & 0x7f) | 0x80
      n >>>= 7
    }
    b[p++] = n
    this.#pos = p
  }
  writeRaw(bytes: Uint8Array): void {
    this.#ensure(bytes.length)
    this.#buf.set(bytes, this.#pos)
    this.#pos += bytes.length
  }

  #utf8(s: string, len: number): void {
    this.#ensure(len)
    if (len === s.length && len < 32) {
      // short ASCII: a plain loop beats the native call
      const b = this.#buf
      const p = this.#pos
      for (let i = 0; i < len; i++) b[p + i] = s.charCodeAt(i)
    } else {
      this.#buf.write(s, this.#pos, len, 'utf8')
    }
    this.#pos += len
  }

  writeNullableString(s: string | null): void {
    if (s === null) {
      this.writeInt16(-1)
      return
    }
    const len = Buffer.byteLength(s, 'utf8')
    if (len > 0x7fff) throw new EncodeError('TOO_LONG', `string of ${len} bytes is longer than 32767`)
    this.writeInt16(len)
    this.#utf8(s, len)
  }
  writeString(s: string): void {
    if (s === null) throw new EncodeError('NULL_NOT_ALLOWED', 'non-nullable string is null')
    this.writeNullableString(s)
  }
  writeCompactNullableString(s: string | null): void {
    if (s === null) {
      this.writeUVarint(0)
      return
    }
    const len = Buffer.byteLength(s, 'utf8')
    if (len > 0x7fff) throw new EncodeError('TOO_LONG', `string of ${len} bytes is longer than 32767`)
    this.writeUVarint(len + 1)
    this.#utf8(s, len)
  }
  writeCompactString(s: string): void {
    if (s === null) throw new EncodeError('NULL_NOT_ALLOWED', 'non-nullable string is null')
    this.writeCompactNullableString(s)
  }

  writeNullableBytes(b: Uint8Array | null): void {
    if (b === null) {
      this.writeInt32(-1)
      return
    }
    this.writeInt32(b.length)
    this.writeRaw(b)
  }
  writeBytes(b: Uint8Array): void {
    if (b === null) throw new EncodeError('NULL_NOT_ALLOWED', 'non-nullable bytes field is null')
    this.writeNullableBytes(b)
  }
  writeCompactNullableBytes(b: Uint8Array | null): void {
    if (b === null) {
      this.writeUVarint(0)
      return
    }
    this.writeUVarint(b.length + 1)
    this.writeRaw(b)
  }
  writeCompactBytes(b: Uint8Array): void {
    if (b === null) throw new EncodeError('NULL_NOT_ALLOWED', 'non-nullable bytes field is null')
    this.writeCompactNullableBytes(b)
  }

  /** A records field's bytes (after its length): referred to when large enough, else copied. */
  #records(b: Uint8Array): void {
    if (b.byteLength < this.#referenceFrom) {
      this.writeRaw(b)
      return
    }
    if (this.#refs === null) this.#refs = []
    this.#refs.push({ at: this.#pos, bytes: b })
    this.#refBytes += b.byteLength
  }
  /** As writeNullableBytes; see {@link Writer} for when the bytes are referred to, not copied. */
  writeNullableRecords(b: Uint8Array | null): void {
    if (b === null) {
      this.writeInt32(-1)
      return
    }
    this.writeInt32(b.length)
    this.#records(b)
  }
  writeRecords(b: Uint8Array): void {
    if (b === null) throw new EncodeError('NULL_NOT_ALLOWED', 'non-nullable records field is null')
    this.writeNullableRecords(b)
  }
  /** As writeCompactNullableBytes; see {@link Writer} for when the bytes are referred to, not copied. */
  writeCompactNullableRecords(b: Uint8Array | null): void {
    if (b === null) {
      this.writeUVarint(0)
      return
    }
    this.writeUVarint(b.length + 1)
    this.#records(b)
  }
  writeCompactRecords(b: Uint8Array): void {
    if (b === null) throw new EncodeError('NULL_NOT_ALLOWED', 'non-nullable records field is null')
    this.writeCompactNullableRecords(b)
  }

  /** int32 count, -1 for null. */
  writeArrayLength(n: number): void {
    this.writeInt32(n)
  }
  /** uvarint (count + 1), 0 for null (pass -1). */
  writeCompactArrayLength(n: number): void {
    this.writeUVarint(n + 1)
  }

  /** Reserves an int32 and returns its position, for `patchInt32`. */
  reserveInt32(): number {
    this.#ensure(4)
    const p = this.#pos
    this.#pos += 4
    return p
  }
  patchInt32(at: number, v: number): void {
    if ((v | 0) !== v) throw outOfRange('int32', v)
    this.#dv.setInt32(this.#base + at, v)
  }

  /** Starts a payload whose uvarint size is written before it by `endUVarintSized`. */
  beginUVarintSized(): number {
    if (this.#referenceFrom !== Number.POSITIVE_INFINITY)
      (this.#sizedRefs ??= []).push(this.#refs?.length ?? 0)
    return this.#pos
  }
  /** Inserts the uvarint size of everything written since `start` in front of it (a memmove, no copy out). */
  endUVarintSized(start: number): void {
    let size = this.#pos - start
    // References taken inside the payload count in its size and move with its bytes.
    const refs = this.#refs
    const firstInside = this.#sizedRefs?.pop() ?? 0
    if (refs !== null) for (let i = firstInside; i < refs.length; i++) size += refs[i].bytes.byteLength
    const n = uvarintSize(size)
    if (refs !== null) for (let i = firstInside; i < refs.length; i++) refs[i].at += n
    this.#ensure(n)
    const b = this.#buf
    b.copyWithin(start + n, start, this.#pos)
    let p = start
    let v = size
    while (v >= 0x80) {
      b[p++] = (v & 0x7f) | 0x80
      v >>>= 7
    }
    b[p] = v
    this.#pos += n
  }

  writeTaggedField(f: TaggedField): void {
    this.writeUVarint(f.tag)
    this.writeUVarint(f.data.length)
    this.writeRaw(f.data)
  }
}
