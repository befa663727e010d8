import { Buffer } from 'node:buffer'
import { DecodeError } from './errors-codec.js'

/** An unknown tagged field kept on decode and re-emitted on encode. */
export interface TaggedField {
  tag: number
  data: Uint8Array
}

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA'

/** base64url alphabet as char codes: a uuid string is built with one String.fromCharCode call. */
const B64 = Uint8Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', (c) =>
  c.charCodeAt(0),
)

/**
 * Buffer's per-encoding slice methods (`buf.toString(enc, s, e)` dispatches to these after argument
 * handling). Present on Node 20 and 22 but not in the typings; when missing, `toString` is used.
 */
interface SliceMethods {
  utf8Slice(start: number, end: number): string
  latin1Slice(start: number, end: number): string
}
const proto = Buffer.prototype as unknown as Partial<SliceMethods>
const hasSlices = typeof proto.utf8Slice === 'function' && typeof proto.latin1Slice === 'function'

/**
 * ASCII strings are cut out of a latin1 string of the surrounding bytes (the window), decoded with
 * one call for several fields: `substring` costs about 15 ns where each `utf8Slice`/`latin1Slice`
 * call costs about 130 ns on Node 20, whatever the length. A window covers this many bytes from the
 * first string that is not inside the previous one (or the whole string when longer). V8 may share a
 * substring of 13 or more characters with its window, so a kept string can keep at most one window
 * (about 2 KB) alive; it never refers to the input bytes.
 *
 * The first window of a message covers only FIRST_WINDOW bytes: most requests have their few strings
 * near the start (a Produce's client id and topic name, with 16 KB of records behind them), and a
 * 2 KB window there was 2 KB of garbage per request, a fifth of what a Produce allocated. A message
 * with strings further on (Metadata, OffsetCommit) takes full windows from its second on: one
 * `latin1Slice` more.
 */
const WINDOW = 2048
const FIRST_WINDOW = 256

/**
 * DataView and Uint8Array over the whole ArrayBuffer of the last Reader, reused by the next Reader on
 * the same ArrayBuffer (frames cut from one connection buffer or from Buffer's pool): a DataView
 * costs about 130 ns to construct on Node 20. Kept only for ArrayBuffers up to CACHE_MAX bytes, so the
 * cache holds at most that much memory alive.
 */
const CACHE_MAX = 1 << 20
let cachedAb: ArrayBufferLike | undefined
let cachedDv: DataView | undefined
let cachedU8: Uint8Array | undefined

/**
 * Bytes fields are copied, never views of the input. Up to HEAP_BYTES (V8's limit for typed arrays on
 * its heap) `slice` is cheapest (about 140 ns for 64 bytes). Above that `slice` allocates outside the
 * heap (about 850 ns for 200 bytes), so the first such field a Reader meets copies up to BYTES_WINDOW
 * bytes of the input from there (one `set`) into a shared slab, and every longer field inside that
 * copy is returned as a Uint8Array view of the slab (about 35 ns). Like Buffer's pool: a kept field
 * keeps its SLAB-byte slab alive, and its `.buffer` is the slab. Fields longer than BYTES_WINDOW get
 * their own copy.
 */
const SLAB = 8192
const BYTES_WINDOW = 2048
const HEAP_BYTES = 64
let slab = new ArrayBuffer(0)
let slabU8 = new Uint8Array(slab)
let slabPos = SLAB

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/**
 * Reads Kafka primitives from a byte array with a cursor. Every failure is a `DecodeError` carrying
 * the byte offset; lengths are checked against the remaining bytes before anything is allocated.
 * Byte fields and unknown tagged fields are returned as copies, so a decoded message never aliases
 * the input buffer (which the caller may reuse), except `records` fields: they are the bulk of a
 * Produce request and of a Fetch answer, and are returned as views of the input (readRecords and
 * its kin), valid for as long as the input is.
 */
export class Reader {
  /** The input (changed only by {@link Reader.reset}). */
  buf!: Buffer
  offset!: number
  /** Where the input ends (changed only by {@link Reader.reset}). */
  end!: number
  /**
   * The byte length of the longest string read since {@link Reader.reset}: the server's router
   * looks for a string too long for a response only in a request that read one this long.
   */
  longestString = 0
  // Numbers are read through a DataView: on Node 20 its getters are compiler intrinsics, several
  // times faster than Buffer's readInt32BE family (measured in bench/codec).
  #dv!: DataView
  // The same bytes as a plain Uint8Array: its slice() copies into a fresh Uint8Array (on the V8 heap
  // when small); see HEAP_BYTES
  #u8!: Uint8Array
  // #dv and #u8 cover the whole ArrayBuffer: offset o of `buf` is #base + o in them
  #base!: number
  // latin1 string of bytes [#winStart, #winStart + #win.length) of `buf`; see WINDOW
  #win = ''
  #winStart = 0
  // bytes [#bytesStart, #bytesEnd) of `buf` are copied in #bytesSlab at #bytesAt; see BYTES_WINDOW
  #bytesStart = 0
  #bytesEnd = 0
  #bytesSlab = slab
  #bytesAt = 0

  constructor(bytes: Uint8Array, offset = 0, end = bytes.byteLength) {
    this.reset(bytes, offset, end)
  }

  /**
   * Starts reading other input, as a new Reader over it would: a caller that decodes one message
   * after another (the server's router, one request at a time) keeps one Reader instead of making
   * one per message. Nothing decoded refers to the Reader, so it may be reset as soon as a message
   * is decoded; what was decoded stays valid as before (strings and bytes are copies, records
   * fields views of the input).
   */
  reset(bytes: Uint8Array, offset = 0, end = bytes.byteLength): this {
    this.buf = asBuffer(bytes)
    const ab = bytes.buffer
    if (ab === cachedAb) {
      this.#dv = cachedDv!
      this.#u8 = cachedU8!
      this.#base = bytes.byteOffset
    } else if (ab.byteLength <= CACHE_MAX) {
      cachedAb = ab
      this.#dv = cachedDv = new DataView(ab)
      this.#u8 = cachedU8 = new Uint8Array(ab)
      this.#base = bytes.byteOffset
    } else {
      this.#dv = new DataView(ab, bytes.byteOffset, bytes.byteLength)
      this.#u8 = new Uint8Array(ab, bytes.byteOffset, bytes.byteLength)
      this.#base = 0
    }
    this.offset = offset
    this.end = end
    this.longestString = 0
    this.#win = ''
    this.#winStart = 0
    this.#bytesStart = 0
    this.#bytesEnd = 0
    this.#bytesSlab = slab
    this.#bytesAt = 0
    return this
  }

  get remaining(): number {
    return this.end - this.offset
  }

  fail(code: DecodeError['code'], message: string, at = this.offset): never {
    throw new DecodeError(code, at, message)
  }

  #need(n: number): number {
    const o = this.offset
    if (this.end - o < n) this.fail('TRUNCATED', `need ${n} bytes, ${this.end - o} remaining`)
    this.offset = o + n
    return o
  }

  readInt8(): number {
    return this.#dv.getInt8(this.#base + this.#need(1))
  }
  readUInt8(): number {
    return this.buf[this.#need(1)]!
  }
  readBool(): boolean {
    return this.buf[this.#need(1)] !== 0
  }
  readInt16(): number {
    return this.#dv.getInt16(this.#base + this.#need(2))
  }
  readUInt16(): number {
    return this.#dv.getUint16(this.#base + this.#need(2))
  }
  readInt32(): number {
    return this.#dv.getInt32(this.#base + this.#need(4))
  }
  readInt64(): bigint {
    return this.#dv.getBigInt64(this.#base + this.#need(8))
  }
  readFloat64(): number {
    return this.#dv.getFloat64(this.#base + this.#need(8))
  }
  readUuid(): string {
    const o = this.#need(16)
    const dv = this.#dv
    const d = this.#base + o
    const w0 = dv.getInt32(d)
    const w1 = dv.getInt32(d + 4)
    const w2 = dv.getInt32(d + 8)
    const w3 = dv.getInt32(d + 12)
    if ((w0 | w1 | w2 | w3) === 0) return ZERO_UUID
    // 16 bytes = five 3-byte groups (4 chars each) + one byte (2 chars), no padding
    const x0 = w0 >>> 8
    const x1 = ((w0 & 0xff) << 16) | (w1 >>> 16)
    const x2 = ((w1 & 0xffff) << 8) | (w2 >>> 24)
    const x3 = w2 & 0xffffff
    const x4 = w3 >>> 8
    const l = w3 & 0xff
    const t = B64
    return String.fromCharCode(
      t[x0 >> 18]!,
      t[(x0 >> 12) & 63]!,
      t[(x0 >> 6) & 63]!,
      t[x0 & 63]!,
      t[x1 >> 18]!,
      t[(x1 >> 12) & 63]!,
      t[(x1 >> 6) & 63]!,
      t[x1 & 63]!,
      t[x2 >> 18]!,
      t[(x2 >> 12) & 63]!,
      t[(x2 >> 6) & 63]!,
      t[x2 & 63]!,
      t[x3 >> 18]!,
      t[(x3 >> 12) & 63]!,
      t[(x3 >> 6) & 63]!,
      t[x3 & 63]!,
      t[x4 >> 18]!,
      t[(x4 >> 12) & 63]!,
      t[(x4 >> 6) & 63]!,
      t[x4 & 63]!,
      t[l >> 2]!,
      t[(l & 3) << 4]!,
    )
  }

  /** Unsigned varint of at most 5 bytes, as an unsigned 32-bit number. */
  readUVarint(): number {
    const b = this.buf
    const start = this.offset
    // one-byte fast path: lengths, counts and tag sections are almost always < 128
    if (start < this.end) {
      const first = b[start]!
      if (first < 0x80) {
        this.offset = start + 1
        return first
      }
    }
    let o = start
    let value = 0
    // The weight of the next group of 7 bits, kept as a product: `2 ** shift` with a variable
    // shift is a call to V8's pow on every byte (0.5 % of the server's main thread at half load,
    // from the records field's 2-byte length of each Produce partition).
    let weight = 1
    for (let i = 0; i < 5; i++) {
      if (o >= this.end) this.fail('TRUNCATED', 'truncated varint', start)
      const byte = b[o++]!
      value += (byte & 0x7f) * weight
      if ((byte & 0x80) === 0) {
        if (value > 0xffffffff) this.fail('BAD_VARINT', 'varint overflows 32 bits', start)
        this.offset = o
        return value
      }
      weight *= 128
    }
    return this.fail('BAD_VARINT', 'varint is longer than 5 bytes', start)
  }

  #checkLength(len: number, at: number): void {
    if (len > this.end - this.offset)
      this.fail(
        'LENGTH_EXCEEDS_REMAINING',
        `length ${len} exceeds the ${this.end - this.offset} remaining bytes`,
        at,
      )
  }

  #utf8(len: number, at: number): string {
    this.#checkLength(len, at)
    if (len > this.longestString) this.longestString = len
    const o = this.offset
    const e = o + len
    this.offset = e
    if (!hasSlices) return this.buf.toString('utf8', o, e)
    // ASCII check four bytes at a time
    const dv = this.#dv
    const base = this.#base
    let hi = 0
    let i = base + o
    const de = base + e
    for (; i + 4 <= de; i += 4) hi |= dv.getInt32(i)
    for (; i < de; i++) hi |= dv.getUint8(i)
    if ((hi & 0x80808080) !== 0) return (this.buf as unknown as SliceMethods).utf8Slice(o, e)
    let ws = this.#winStart
    if (o < ws || e > ws + this.#win.length) {
      if (len === 0) return ''
      const size = this.#win.length === 0 ? FIRST_WINDOW : WINDOW
      ws = o
      this.#winStart = o
      this.#win = (this.buf as unknown as SliceMethods).latin1Slice(
        o,
        Math.min(this.end, o + Math.max(len, size)),
      )
    }
    return this.#win.substring(o - ws, e - ws)
  }

  readNullableString(): string | null {
    const at = this.offset
    const len = this.readInt16()
    if (len < 0) {
      if (len === -1) return null
      this.fail('NEGATIVE_LENGTH', `negative string length ${len}`, at)
    }
    return this.#utf8(len, at)
  }
  readString(): string {
    const at = this.offset
    const s = this.readNullableString()
    if (s === null) this.fail('UNEXPECTED_NULL', 'non-nullable string is null', at)
    return s
  }
  readCompactNullableString(): string | null {
    const at = this.offset
    const n = this.readUVarint()
    if (n === 0) return null
    return this.#utf8(n - 1, at)
  }
  readCompactString(): string {
    const at = this.offset
    const s = this.readCompactNullableString()
    if (s === null) this.fail('UNEXPECTED_NULL', 'non-nullable string is null', at)
    return s
  }

  /** `len` raw bytes, copied. */
  readRaw(len: number): Uint8Array {
    this.#checkLength(len, this.offset)
    const o = this.offset
    const e = o + len
    this.offset = e
    if (o >= this.#bytesStart && e <= this.#bytesEnd)
      return new Uint8Array(this.#bytesSlab, this.#bytesAt + (o - this.#bytesStart), len)
    const base = this.#base
    if (len <= HEAP_BYTES || len > BYTES_WINDOW) return this.#u8.slice(base + o, base + e)
    const n = Math.min(this.end - o, BYTES_WINDOW)
    if (slabPos + n > SLAB) {
      slab = new ArrayBuffer(SLAB)
      slabU8 = new Uint8Array(slab)
      slabPos = 0
    }
    const at = slabPos
    slabU8.set(this.#u8.subarray(base + o, base + o + n), at)
    slabPos = (at + n + 7) & ~7
    this.#bytesStart = o
    this.#bytesEnd = o + n
    this.#bytesSlab = slab
    this.#bytesAt = at
    return new Uint8Array(slab, at, len)
  }

  readNullableBytes(): Uint8Array | null {
    const at = this.offset
    const len = this.readInt32()
    if (len < 0) {
      if (len === -1) return null
      this.fail('NEGATIVE_LENGTH', `negative bytes length ${len}`, at)
    }
    this.#checkLength(len, at)
    return this.readRaw(len)
  }
  readBytes(): Uint8Array {
    const at = this.offset
    const b = this.readNullableBytes()
    if (b === null) this.fail('UNEXPECTED_NULL', 'non-nullable bytes field is null', at)
    return b
  }
  readCompactNullableBytes(): Uint8Array | null {
    const at = this.offset
    const n = this.readUVarint()
    if (n === 0) return null
    this.#checkLength(n - 1, at)
    return this.readRaw(n - 1)
  }
  readCompactBytes(): Uint8Array {
    const at = this.offset
    const b = this.readCompactNullableBytes()
    if (b === null) this.fail('UNEXPECTED_NULL', 'non-nullable bytes field is null', at)
    return b
  }

  /**
   * `len` bytes as a view of the input, not a copy: the `records` fields (a Produce request's
   * batches, a Fetch answer's), the one kind of field worth the aliasing. The view is valid as long
   * as the input bytes are; whoever keeps it past that copies it.
   */
  #view(len: number, at: number): Uint8Array {
    this.#checkLength(len, at)
    const o = this.#base + this.offset
    this.offset += len
    return this.#u8.subarray(o, o + len)
  }
  /** int32-length records field, a view of the input (see #view); -1 = null. */
  readNullableRecords(): Uint8Array | null {
    const at = this.offset
    const len = this.readInt32()
    if (len < 0) {
      if (len === -1) return null
      this.fail('NEGATIVE_LENGTH', `negative bytes length ${len}`, at)
    }
    return this.#view(len, at)
  }
  readRecords(): Uint8Array {
    const at = this.offset
    const b = this.readNullableRecords()
    if (b === null) this.fail('UNEXPECTED_NULL', 'non-nullable records field is null', at)
    return b
  }
  /** uvarint (length + 1) records field, a view of the input (see #view); 0 = null. */
  readCompactNullableRecords(): Uint8Array | null {
    const at = this.offset
    const n = this.readUVarint()
    if (n === 0) return null
    return this.#view(n - 1, at)
  }
  readCompactRecords(): Uint8Array {
    const at = this.offset
    const b = this.readCompactNullableRecords()
    if (b === null) this.fail('UNEXPECTED_NULL', 'non-nullable records field is null', at)
    return b
  }

  /** int32 array count; -1 = null. The count is checked against the remaining bytes before allocation. */
  readArrayLength(): number {
    const at = this.offset
    const n = this.readInt32()
    if (n < 0) {
      if (n === -1) return -1
      this.fail('NEGATIVE_LENGTH', `negative array length ${n}`, at)
    }
    this.#checkLength(n, at)
    return n
  }
  /** `n` int32 values (the count already read), with one bounds check. */
  readInt32Array(n: number): number[] {
    let o = this.offset
    if (this.end - o < n * 4) this.fail('TRUNCATED', `need ${n * 4} bytes, ${this.end - o} remaining`)
    this.offset = o + n * 4
    o += this.#base
    const dv = this.#dv
    // exact-size literals for the usual replica and ISR lists (push grows an empty array to 17 slots)
    switch (n) {
      case 0:
        return []
      case 1:
        return [dv.getInt32(o)]
      case 2:
        return [dv.getInt32(o), dv.getInt32(o + 4)]
      case 3:
        return [dv.getInt32(o), dv.getInt32(o + 4), dv.getInt32(o + 8)]
      case 4:
        return [dv.getInt32(o), dv.getInt32(o + 4), dv.getInt32(o + 8), dv.getInt32(o + 12)]
    }
    const out: number[] = []
    for (let i = 0; i < n; i++) out.push(dv.getInt32(o + i * 4))
    return out
  }

  /** uvarint (count + 1); returns -1 for null. */
  readCompactArrayLength(): number {
    const at = this.offset
    const n = this.readUVarint() - 1
    if (n >= 0) this.#checkLength(n, at)
    return n
  }

  /** Unknown tagged field payload, copied. */
  readTaggedField(tag: number, size: number): TaggedField {
    return { tag, data: this.readRaw(size) }
  }

  /** Checks that a known tagged field consumed exactly its declared size. */
  endTaggedField(end: number, tag: number): void {
    if (this.offset !== end)
      this.fail('BAD_TAGGED_FIELD', `tagged field ${tag} does not match its declared size`)
  }

  /** Size of a tagged field payload, checked against the remaining bytes. */
  readTaggedSize(): number {
    const at = this.offset
    const n = this.readUVarint()
    this.#checkLength(n, at)
    return n
  }

  expectEnd(what: string): void {
    if (this.offset !== this.end)
      this.fail('TRAILING_BYTES', `${this.end - this.offset} unread bytes after ${what}`)
  }
}
