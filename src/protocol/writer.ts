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

/**
 * A growable output buffer for Kafka primitives. Length prefixes are reserved and back-patched
 * (`reserveInt32`/`patchInt32`, `beginUVarintSized`/`endUVarintSized`), so nothing is encoded twice.
 * `finish()` returns a view of the internal buffer (no copy); start a new Writer for the next message.
 */
export class Writer {
  #buf: Buffer
  // Numbers go through a DataView: on Node 20 its setters are compiler intrinsics, several times
  // faster than Buffer's writeInt32BE family (measured in bench/codec).
  #dv: DataView
  // #dv may cover the whole ArrayBuffer behind #buf: offset o of #buf is #base + o in it
  #base: number
  #pos: number

  constructor(initialCapacity = 256) {
    this.#buf = Buffer.allocUnsafe(initialCapacity)
    this.#dv = viewOf(this.#buf)
    this.#base = this.#dv === cachedDv ? this.#buf.byteOffset : 0
    this.#pos = 0
  }

  get length(): number {
    return this.#pos
  }

  #ensure(n: number): void {
    const need = this.#pos + n
    if (need <= this.#buf.length) return
    let cap = this.#buf.length * 2
    while (cap < need) cap *= 2
    const next = Buffer.allocUnsafe(cap)
    this.#buf.copy(next, 0, 0, this.#pos)
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

  /** The bytes written so far, as a view of the internal buffer. */
  finish(): Buffer {
    return this.#buf.subarray(0, this.#pos)
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
    return this.#pos
  }
  /** Inserts the uvarint size of everything written since `start` in front of it (a memmove, no copy out). */
  endUVarintSized(start: number): void {
    const size = this.#pos - start
    const n = uvarintSize(size)
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
