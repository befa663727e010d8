/**
 * The embedded consumer protocol of classic groups (Kafka's ConsumerProtocol): the subscription a
 * member sends in JoinGroup's protocol metadata and the assignment SyncGroup returns, each an int16
 * version followed by the ConsumerProtocolSubscription / ConsumerProtocolAssignment struct of that
 * version (non-flexible, versions 0–3). A newer version is read as version 3, its extra bytes
 * ignored, as Kafka's clients do. The coordinator reads them to move classic members into a consumer
 * group and writes assignments back for them (online migration, KIP-848).
 */
import { Reader } from './reader.js'
import { Writer } from './writer.js'

const HIGHEST_VERSION = 3

/** The protocol type of the groups whose metadata and assignments are this protocol's. */
export const CONSUMER_PROTOCOL_TYPE = 'consumer'

export interface TopicPartitions {
  readonly topic: string
  readonly partitions: readonly number[]
}

export interface ConsumerProtocolSubscription {
  readonly version: number
  readonly topics: readonly string[]
  readonly userData: Uint8Array | null
  readonly ownedPartitions: readonly TopicPartitions[]
  readonly generationId: number
  readonly rackId: string | null
}

export interface ConsumerProtocolAssignment {
  readonly assignedPartitions: readonly TopicPartitions[]
  readonly userData: Uint8Array | null
}

/** A malformed subscription or assignment (Kafka's SchemaException). */
export class ConsumerProtocolError extends Error {
  override readonly name = 'ConsumerProtocolError'
}

function decode<T>(bytes: Uint8Array, what: string, body: (r: Reader, version: number) => T): T {
  try {
    const r = new Reader(bytes)
    const version = r.readInt16()
    if (version < 0) throw new ConsumerProtocolError(`Unsupported ${what} version: ${version}`)
    return body(r, Math.min(version, HIGHEST_VERSION))
  } catch (e) {
    if (e instanceof ConsumerProtocolError) throw e
    throw new ConsumerProtocolError(`Error reading ${what}: ${(e as Error).message}`, { cause: e })
  }
}

function readTopicPartitions(r: Reader): TopicPartitions[] {
  const n = r.readArrayLength()
  const out: TopicPartitions[] = []
  for (let i = 0; i < n; i++) {
    const topic = r.readString()
    const count = r.readArrayLength()
    out.push({ topic, partitions: count < 0 ? [] : r.readInt32Array(count) })
  }
  return out
}

function writeTopicPartitions(w: Writer, list: readonly TopicPartitions[]): void {
  w.writeArrayLength(list.length)
  for (const t of list) {
    w.writeString(t.topic)
    w.writeArrayLength(t.partitions.length)
    for (const p of t.partitions) w.writeInt32(p)
  }
}

/** The version a subscription or assignment was written with (Kafka's deserializeVersion). */
export function consumerProtocolVersion(bytes: Uint8Array): number {
  return decode(bytes, 'version', (_r, version) => version)
}

export function decodeSubscription(bytes: Uint8Array): ConsumerProtocolSubscription {
  return decode(bytes, 'subscription', (r, version) => {
    const count = r.readArrayLength()
    const topics: string[] = []
    for (let i = 0; i < count; i++) topics.push(r.readString())
    const userData = r.readNullableBytes()
    // Fields a version does not carry, and ignorable fields missing at the end, take their defaults.
    const ownedPartitions = version >= 1 && r.remaining > 0 ? readTopicPartitions(r) : []
    const generationId = version >= 2 && r.remaining > 0 ? r.readInt32() : -1
    const rackId = version >= 3 && r.remaining > 0 ? r.readNullableString() : null
    return { version, topics, userData, ownedPartitions, generationId, rackId }
  })
}

/**
 * The topics of a subscription, read as version 0, the prefix of every version (Kafka's classic
 * group reads its members' subscriptions so, independent of the versions it knows).
 */
export function decodeSubscribedTopics(bytes: Uint8Array): string[] {
  return decode(bytes, 'subscription', (r) => {
    const count = r.readArrayLength()
    const topics: string[] = []
    for (let i = 0; i < count; i++) topics.push(r.readString())
    return topics
  })
}

export function decodeAssignment(bytes: Uint8Array): ConsumerProtocolAssignment {
  return decode(bytes, 'assignment', (r) => {
    const assignedPartitions = readTopicPartitions(r)
    const userData = r.remaining > 0 ? r.readNullableBytes() : null
    return { assignedPartitions, userData }
  })
}

/** An assignment in `version` (capped at 3; the struct is the same in every version). */
export function encodeAssignment(assignment: ConsumerProtocolAssignment, version: number): Uint8Array {
  const w = new Writer(64)
  w.writeInt16(Math.max(0, Math.min(version, HIGHEST_VERSION)))
  writeTopicPartitions(w, assignment.assignedPartitions)
  w.writeNullableBytes(assignment.userData)
  return Uint8Array.from(w.finish())
}

/** A subscription in `version` (capped at 3), as a classic consumer writes it. */
export function encodeSubscription(
  s: Omit<ConsumerProtocolSubscription, 'version'>,
  version: number,
): Uint8Array {
  const v = Math.max(0, Math.min(version, HIGHEST_VERSION))
  const w = new Writer(64)
  w.writeInt16(v)
  w.writeArrayLength(s.topics.length)
  for (const t of s.topics) w.writeString(t)
  w.writeNullableBytes(s.userData)
  if (v >= 1) writeTopicPartitions(w, s.ownedPartitions)
  if (v >= 2) w.writeInt32(s.generationId)
  if (v >= 3) w.writeNullableString(s.rackId)
  return Uint8Array.from(w.finish())
}
