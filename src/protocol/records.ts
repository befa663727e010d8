/**
 * Coordinator record framing, as Kafka's `CoordinatorRecordSerde` does it:
 *   key   = int16 record type id (the key schema's apiKey) + key struct at version 0 (not flexible)
 *   value = int16 value version + value struct at that version; a null value is a tombstone.
 * LegacyOffsetCommitKey (0) and OffsetCommitKey (1) are the two offset key type ids; GroupMetadataKey is 2.
 */
import { Buffer } from 'node:buffer'
import {
  COORDINATOR_RECORDS,
  type CoordinatorRecord,
  type CoordinatorRecordDefinition,
  type CoordinatorRecordType,
} from './generated/coordinator-records.js'
import { DecodeError } from './errors-codec.js'
import { Reader } from './reader.js'
import { Writer } from './writer.js'

export type { CoordinatorRecord, CoordinatorRecordType } from './generated/coordinator-records.js'

/** A key whose type id has no schema here. Callers loading a log skip such records, as Kafka does. */
export class UnknownRecordTypeError extends Error {
  override name = 'UnknownRecordTypeError'
  readonly typeId: number
  constructor(typeId: number) {
    super(`unknown coordinator record type id ${typeId}`)
    this.typeId = typeId
  }
}

const BY_ID = new Map<number, CoordinatorRecordDefinition>(COORDINATOR_RECORDS.map((d) => [d.typeId, d]))
const BY_TYPE = new Map<CoordinatorRecordType, CoordinatorRecordDefinition>(
  COORDINATOR_RECORDS.map((d) => [d.type, d]),
)

/** The framing facts for a record type (type id, value version range). */
export function coordinatorRecordDefinition(type: CoordinatorRecordType): CoordinatorRecordDefinition {
  return BY_TYPE.get(type)!
}

export interface EncodedCoordinatorRecord {
  key: Uint8Array
  /** null for a tombstone */
  value: Uint8Array | null
}

/**
 * An encoded record carved out of a shared buffer: its key's `keyLength` bytes from `offset` in
 * `bytes`, then its value's `valueLength` bytes (-1: a tombstone). `key` and `value` are views of
 * those bytes made when first read: a record store that copies records by where they lie (the
 * memory engine) never makes them. Two views were about 230 of the 1,000 bytes a Streams-shaped
 * commit allocated per offset.
 */
export class SlabRecord implements EncodedCoordinatorRecord {
  readonly bytes: Buffer
  readonly offset: number
  readonly keyLength: number
  readonly valueLength: number
  #key: Uint8Array | undefined
  #value: Uint8Array | undefined

  constructor(bytes: Buffer, offset: number, keyLength: number, valueLength: number) {
    this.bytes = bytes
    this.offset = offset
    this.keyLength = keyLength
    this.valueLength = valueLength
  }

  get key(): Uint8Array {
    if (this.#key === undefined)
      this.#key = new Uint8Array(this.bytes.buffer, this.bytes.byteOffset + this.offset, this.keyLength)
    return this.#key
  }

  get value(): Uint8Array | null {
    if (this.valueLength < 0) return null
    if (this.#value === undefined)
      this.#value = new Uint8Array(
        this.bytes.buffer,
        this.bytes.byteOffset + this.offset + this.keyLength,
        this.valueLength,
      )
    return this.#value
  }
}

/**
 * Encodes a record; the value is written at `rec.valueVersion`, or the highest version the schema
 * has. Key and value are written by one writer into one buffer and returned as two views of it (one
 * allocation per record, not one per part).
 */
export function encodeCoordinatorRecord(rec: CoordinatorRecord): EncodedCoordinatorRecord {
  const def = BY_TYPE.get(rec.type)
  if (def === undefined) throw new RangeError(`unknown coordinator record type ${String(rec.type)}`)
  const w = new Writer(rec.value === null ? 64 : 192)
  w.writeInt16(def.typeId)
  def.writeKey(w, rec.key as never, 0)
  if (rec.value === null) return { key: w.finish(), value: null }
  const version = rec.valueVersion ?? def.maxValueVersion
  if (version < def.minValueVersion || version > def.maxValueVersion)
    throw new RangeError(
      `${rec.type} value version ${version} is outside ${def.minValueVersion}-${def.maxValueVersion}`,
    )
  const keyLength = w.length
  w.writeInt16(version)
  def.writeValue(w, rec.value as never, version)
  const bytes = w.finish()
  return { key: bytes.subarray(0, keyLength), value: bytes.subarray(keyLength) }
}

const OFFSET_COMMIT_TYPE_ID = 1
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** The encoded start of an OffsetCommit key: type id, group and topic (the partition's int32 follows). */
interface CommitKeyPrefix {
  group: string
  topic: string
  readonly bytes: Uint8Array
}

/**
 * The key starts of the last few (group, topic) pairs written, the latest first. Kept across calls,
 * as one group commits the same topics again and again; a commit of several topics (a consumer's
 * two, say) goes from one to the next and back in every request, so one entry would be rebuilt
 * twice a commit (about a tenth of what a one-group commit of 2 topics allocated).
 */
const commitKeyPrefixes: CommitKeyPrefix[] = []
const COMMIT_KEY_PREFIXES = 8

function offsetCommitKeyPrefix(group: string, topic: string): Uint8Array {
  const cache = commitKeyPrefixes
  let i = 0
  while (i < cache.length && (cache[i].group !== group || cache[i].topic !== topic)) i++
  let entry: CommitKeyPrefix
  if (i < cache.length) {
    entry = cache[i]
    // The strings of this commit from now on: every request decodes its own, equal ones, and equal
    // strings that are not the same string are compared character by character, the same ones not.
    entry.group = group
    entry.topic = topic
  } else {
    const w = new Writer(8 + 3 * (group.length + topic.length))
    w.writeInt16(OFFSET_COMMIT_TYPE_ID)
    w.writeString(group)
    w.writeString(topic)
    // A copy: the writer's buffer may be a slice of Node's shared pool.
    entry = { group, topic, bytes: new Uint8Array(w.finish()) }
    if (i === COMMIT_KEY_PREFIXES) i--
    else cache.push(entry)
  }
  // The latest first: the entries before it move down one (the last one drops out when full).
  for (; i > 0; i--) cache[i] = cache[i - 1]
  cache[0] = entry
  return entry.bytes
}

/**
 * Encoded OffsetCommit records are carved one after another out of a slab: one allocation for
 * hundreds of records instead of one per record. A slab is never written again where a record was
 * carved while any record carved from it may still be read: a full slab is written again from its
 * start only once every record carved from it was handed back through
 * {@link releaseEncodedRecords} (the coordinator runtime does once the store has settled the write,
 * and stores keep copies). A slab whose records are not all handed back is left to the GC.
 *
 * Reusing slabs matters more than the allocation itself: the memory of a fresh slab is mapped by
 * the operating system page by page as it is first written, and on a virtual machine those page
 * faults cost several microseconds each.
 */
const SLAB_BYTES = 64 * 1024
/** Full slabs with records still out, tracked until they come back (the oldest are forgotten). */
const RETIRED_SLABS = 16
/** Emptied slabs kept for reuse. */
const FREE_SLABS = 4

interface Slab {
  readonly bytes: Buffer
  readonly view: DataView
  /** Records carved from it and not handed back. */
  live: number
}

function newSlab(): Slab {
  const bytes = Buffer.allocUnsafeSlow(SLAB_BYTES)
  return { bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), live: 0 }
}

let slab = newSlab()
let slabUsed = 0
/** Full slabs by their buffer, in the order they filled. */
const retiredSlabs = new Map<Buffer, Slab>()
const freeSlabs: Slab[] = []

/** Moves on to an empty slab: a freed one if any, else a new one. */
function nextSlab(): void {
  const full = slab
  if (full.live === 0) {
    if (freeSlabs.length < FREE_SLABS) freeSlabs.push(full)
  } else {
    retiredSlabs.set(full.bytes, full)
    if (retiredSlabs.size > RETIRED_SLABS) {
      // Its records were never all handed back: it stays as it is until the GC takes it.
      const oldest = retiredSlabs.keys().next().value as Buffer
      retiredSlabs.delete(oldest)
    }
  }
  slab = freeSlabs.pop() ?? newSlab()
  slabUsed = 0
}

/**
 * Hands back encoded records once nothing reads them any more (their store write has settled):
 * the slab they were carved from may be written again once all of its records are back. Records
 * not carved from a slab are ignored. Each record is handed back at most once.
 */
export function releaseEncodedRecords(records: readonly EncodedCoordinatorRecord[]): void {
  // Records carved one after another come back together: a run of records of one slab is counted
  // and handed back at once (one lookup of its slab a run, not one a record).
  let run: Buffer | undefined
  let count = 0
  for (let i = 0; i < records.length; i++) {
    const r = records[i]
    if (!(r instanceof SlabRecord)) continue
    if (r.bytes === run) {
      count++
      continue
    }
    if (run !== undefined) releaseSlabRecords(run, count)
    run = r.bytes
    count = 1
  }
  if (run !== undefined) releaseSlabRecords(run, count)
}

/** Hands back `count` records carved from the slab whose buffer is `bytes`. */
function releaseSlabRecords(bytes: Buffer, count: number): void {
  if (bytes === slab.bytes) {
    slab.live -= count
    return
  }
  const s = retiredSlabs.get(bytes)
  if (s === undefined) return
  s.live -= count
  if (s.live === 0) {
    retiredSlabs.delete(bytes)
    if (freeSlabs.length < FREE_SLABS) freeSlabs.push(s)
  }
}

type OffsetCommitRec = Extract<CoordinatorRecord, { type: 'OffsetCommit' }>

/**
 * An OffsetCommit record written straight into the slab, the same bytes as the generated writers
 * give: a key, and a value at version 3 (what commits without a topic id or retention write) or 1
 * (with a retention time). Anything else, or a field the generated writers would refuse, returns
 * undefined and goes the generic way (which throws their error).
 */
function encodeOffsetCommitFast(rec: OffsetCommitRec): SlabRecord | undefined {
  const key = rec.key
  const v = rec.value
  if (typeof key.group !== 'string' || typeof key.topic !== 'string' || (key.partition | 0) !== key.partition)
    return undefined
  let version = 0
  let metadataChars = 0
  if (v !== null) {
    version = rec.valueVersion ?? OFFSET_COMMIT_MAX_VALUE_VERSION
    if (
      (version !== 3 && version !== 1) ||
      v.unknownTaggedFields !== undefined ||
      typeof v.metadata !== 'string' ||
      (version === 3 && (v.leaderEpoch | 0) !== v.leaderEpoch) ||
      !isInt64(v.offset) ||
      !isInt64Timestamp(v.commitTimestamp) ||
      (version === 1 && !isInt64Timestamp(v.expireTimestamp))
    )
      return undefined
    metadataChars = v.metadata.length
    // A string of n UTF-16 units has at most 3n UTF-8 bytes; the length prefix is int16.
    if (metadataChars > 0x7fff / 3) return undefined
  }
  const prefix = offsetCommitKeyPrefix(key.group, key.topic)
  // Room for the key, then the value at its largest (version 1 and 3 both fit 30 bytes + metadata).
  const bound = prefix.length + 4 + (v === null ? 0 : 30 + 3 * metadataChars)
  if (slabUsed + bound > SLAB_BYTES) nextSlab()
  const buf = slab.bytes
  const dv = slab.view
  slab.live++
  const start = slabUsed
  buf.set(prefix, start)
  let p = start + prefix.length
  dv.setInt32(p, key.partition)
  p += 4
  const keyLength = p - start
  if (v === null) {
    slabUsed = p
    return new SlabRecord(buf, start, keyLength, -1)
  }
  const valueStart = p
  dv.setInt16(p, version)
  dv.setBigInt64(p + 2, v.offset)
  p += 10
  if (version === 3) {
    dv.setInt32(p, v.leaderEpoch)
    p += 4
  }
  // The metadata: an ASCII string of fewer than 64 characters copied four characters a store,
  // anything else through Buffer's UTF-8 encoder, whose call costs about as much as copying 20
  // characters one by one, or 40 two at a time (a Kafka Streams commit's metadata is 30 or more).
  // Four a store instead of two took encoding a Streams-shaped commit from about 1.80 to 1.60 µs
  // (one check and one store for four characters).
  const s = v.metadata
  let n = -1
  if (metadataChars < METADATA_COPIED_BY_CHAR) {
    n = metadataChars
    // A non-ASCII character sends the whole string to the encoder.
    const quads = metadataChars & ~3
    let i = 0
    for (; i < quads; i += 4) {
      const a = s.charCodeAt(i)
      const b = s.charCodeAt(i + 1)
      const c = s.charCodeAt(i + 2)
      const d = s.charCodeAt(i + 3)
      if ((a | b | c | d) >= 0x80) break
      dv.setInt32(p + 2 + i, (a << 24) | (b << 16) | (c << 8) | d)
    }
    if (i < quads) n = -1
    else
      for (; i < metadataChars; i++) {
        const c = s.charCodeAt(i)
        if (c >= 0x80) {
          n = -1
          break
        }
        buf[p + 2 + i] = c
      }
  }
  if (n < 0) n = buf.write(s, p + 2, 'utf8')
  dv.setInt16(p, n)
  p += 2 + n
  writeCommitTimestamp(dv, p, v.commitTimestamp)
  p += 8
  if (version === 1) {
    dv.setBigInt64(p, v.expireTimestamp)
    p += 8
  }
  slabUsed = p
  return new SlabRecord(buf, start, keyLength, p - valueStart)
}

const OFFSET_COMMIT_MAX_VALUE_VERSION = BY_TYPE.get('OffsetCommit')!.maxValueVersion
/** Metadata strings shorter than this are copied when ASCII (four characters a store). */
const METADATA_COPIED_BY_CHAR = 64

/** The commit timestamp last written, and its two 32-bit halves. */
let commitTimestamp = -1n
let commitTimestampHigh = -1
let commitTimestampLow = -1

/**
 * Writes the commit timestamp at `p`, big-endian. The records of one commit share their timestamp:
 * after the first, its halves are written as two int32s (DataView's bigint store is a call into
 * the runtime, the int32 ones are not).
 */
function writeCommitTimestamp(dv: DataView, p: number, t: bigint): void {
  if (t !== commitTimestamp) {
    dv.setBigInt64(p, t)
    commitTimestamp = t
    commitTimestampHigh = dv.getInt32(p)
    commitTimestampLow = dv.getInt32(p + 4)
    return
  }
  dv.setInt32(p, commitTimestampHigh)
  dv.setInt32(p + 4, commitTimestampLow)
}

function isInt64(v: unknown): boolean {
  return typeof v === 'bigint' && v >= INT64_MIN && v <= INT64_MAX
}

/** The last timestamp {@link isInt64Timestamp} found an int64. */
let int64Timestamp = 0n

/**
 * {@link isInt64} for a timestamp: the records of one commit share theirs, so after the first an
 * equal bigint (in range, being equal to one that is) needs no comparison with the bounds.
 */
function isInt64Timestamp(v: unknown): boolean {
  if (v === int64Timestamp) return true
  if (!isInt64(v)) return false
  int64Timestamp = v as bigint
  return true
}

/**
 * Encodes the records of one write, each as {@link encodeCoordinatorRecord} does (the same bytes):
 * OffsetCommit records are written straight into a shared slab (no writer, no buffer of their own,
 * the encoded type, group and topic copied from the previous partition's key) and returned as
 * {@link SlabRecord}s, every other record the generic way. Throws as `encodeCoordinatorRecord` does.
 */
export function encodeCoordinatorRecords(records: readonly CoordinatorRecord[]): EncodedCoordinatorRecord[] {
  const n = records.length
  const out = new Array<EncodedCoordinatorRecord>(n)
  for (let i = 0; i < n; i++) {
    const rec = records[i]
    out[i] =
      (rec.type === 'OffsetCommit' ? encodeOffsetCommitFast(rec) : undefined) ?? encodeCoordinatorRecord(rec)
  }
  return out
}

/** The record type id of an encoded key, without decoding the rest. */
export function coordinatorRecordTypeId(key: Uint8Array): number {
  return new Reader(key).readInt16()
}

/**
 * Decodes a record. Throws UnknownRecordTypeError for a type id with no schema (skip it) and
 * DecodeError for malformed bytes or an unknown value version.
 */
export function decodeCoordinatorRecord(key: Uint8Array, value: Uint8Array | null): CoordinatorRecord {
  const kr = new Reader(key)
  const typeId = kr.readInt16()
  const def = BY_ID.get(typeId)
  if (def === undefined) throw new UnknownRecordTypeError(typeId)
  const k = def.readKey(kr, 0)
  kr.expectEnd(`${def.type}Key`)
  if (value === null) return { type: def.type, key: k, value: null } as CoordinatorRecord
  const vr = new Reader(value)
  const version = vr.readInt16()
  if (version < def.minValueVersion || version > def.maxValueVersion)
    throw new DecodeError('INVALID_VALUE', 0, `${def.type} value version ${version} is not supported`)
  const v = def.readValue(vr, version)
  vr.expectEnd(`${def.type}Value`)
  return { type: def.type, key: k, value: v, valueVersion: version } as CoordinatorRecord
}
