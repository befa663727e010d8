/**
 * Coordinator record framing, as Kafka's `CoordinatorRecordSerde` does it:
 *   key   = int16 record type id (the key schema's apiKey) + key struct at version 0 (not flexible)
 *   value = int16 value version + value struct at that version; a null value is a tombstone.
 * LegacyOffsetCommitKey (0) and OffsetCommitKey (1) are the two offset key type ids; GroupMetadataKey is 2.
 */
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
