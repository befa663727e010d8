// Helpers of the data-plane tests: record batches as a producer builds them, Produce / Fetch /
// ListOffsets requests over a WireClient, and the records of a Fetch answer decoded.
import assert from 'node:assert/strict'
import { crc32c } from '@node-rs/crc32'
import {
  type BatchRecord,
  buildBatch,
  decodeRecords,
  encodeRecords,
  readBatchHeader,
  splitBatches,
  batchBody,
  type RecordHeader,
} from '../../src/log/batch.js'
import { compress, decompress } from '../../src/log/compression.js'
import * as p from '../../src/protocol/index.js'
import type { Socket } from 'node:net'
import { decodeResponse, type WireClient } from '../server/wire-client.js'

export const CODECS = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const
export type Codec = keyof typeof CODECS

export interface TestRecord {
  readonly key: string | null
  readonly value: string | null
  readonly timestamp: number
  readonly headers?: readonly { readonly key: string; readonly value: string | null }[]
}

export interface BatchOptions {
  readonly codec?: Codec
  readonly producerId?: number
  readonly producerEpoch?: number
  readonly baseSequence?: number
  readonly transactional?: boolean
}

const enc = (s: string | null) => (s === null ? null : new TextEncoder().encode(s))
const dec = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b))

/** One v2 batch as a producer sends it (base offset 0, leader epoch -1, valid CRC). */
export function makeBatch(records: readonly TestRecord[], opts: BatchOptions = {}): Uint8Array {
  const base = records[0].timestamp
  const body = encodeRecords(
    records.map((r, i) => ({
      timestampDelta: r.timestamp - base,
      offsetDelta: i,
      key: enc(r.key),
      value: enc(r.value),
      headers: (r.headers ?? []).map((h): RecordHeader => ({ key: h.key, value: enc(h.value) })),
    })),
  )
  const codec = CODECS[opts.codec ?? 'none']
  const stored = codec === 0 ? body : compress(codec, body)
  return buildBatch(
    {
      attributes: codec | (opts.transactional ? 0x10 : 0),
      lastOffsetDelta: records.length - 1,
      baseTimestamp: base,
      maxTimestamp: Math.max(...records.map((r) => r.timestamp)),
      producerId: opts.producerId ?? -1,
      producerEpoch: opts.producerEpoch ?? -1,
      baseSequence: opts.baseSequence ?? -1,
      recordsCount: records.length,
    },
    stored,
    crc32c,
  )
}

export interface FetchedRecord extends TestRecord {
  readonly offset: number
}

/** A Fetch answer's records field, which the schema lets be null; this server always sends bytes. */
export function recordsField(field: Uint8Array | null): Uint8Array {
  if (field === null) throw new Error('the records field is null')
  return field
}

/** The records of a Fetch answer's records field, decompressed; trailing partial bytes ignored. */
export function readRecords(field: Uint8Array | null): FetchedRecord[] {
  const bytes = recordsField(field)
  const out: FetchedRecord[] = []
  for (const pos of splitBatches(bytes).positions) {
    const h = readBatchHeader(bytes, pos)
    const codec = h.attributes & 7
    const body = codec === 0 ? batchBody(bytes, pos) : decompress(codec, batchBody(bytes, pos), 1 << 28)
    for (const r of decodeRecords(body, h.recordsCount) as BatchRecord[]) {
      out.push({
        offset: h.baseOffset + r.offsetDelta,
        key: dec(r.key),
        value: dec(r.value),
        timestamp: (h.attributes & 0x08) !== 0 ? h.maxTimestamp : h.baseTimestamp + r.timestampDelta,
        headers: r.headers.map((x) => ({ key: x.key, value: dec(x.value) })),
      })
    }
  }
  return out
}

/** The batch headers of a records field. */
export function batchHeaders(field: Uint8Array | null) {
  const bytes = recordsField(field)
  return splitBatches(bytes).positions.map((pos) => readBatchHeader(bytes, pos))
}

export interface ProducePartition {
  readonly topic: string
  readonly partition: number
  readonly records: Uint8Array | null
  readonly topicId?: string
}

/** A Produce request body. */
export function produceRequest(
  parts: readonly ProducePartition[],
  acks = -1,
  transactionalId: string | null = null,
) {
  const topics = new Map<string, ProducePartition[]>()
  for (const x of parts) {
    const key = x.topicId ?? x.topic
    topics.set(key, [...(topics.get(key) ?? []), x])
  }
  return p.createProduceRequest({
    transactionalId,
    acks,
    timeoutMs: 30000,
    topicData: [...topics.values()].map((ps) =>
      p.createProduceRequestTopicProduceData({
        name: ps[0].topicId === undefined ? ps[0].topic : '',
        topicId: ps[0].topicId,
        partitionData: ps.map((x) =>
          p.createProduceRequestPartitionProduceData({ index: x.partition, records: x.records }),
        ),
      }),
    ),
  })
}

export type ProduceAnswer = p.ProduceResponsePartitionProduceResponse & { topic: string }

/** Sends a Produce request and returns every partition's answer, flattened. */
export async function produce(
  c: WireClient,
  parts: readonly ProducePartition[],
  opts: { version?: number; acks?: number; transactionalId?: string | null } = {},
): Promise<ProduceAnswer[]> {
  const version = opts.version ?? 9
  const res = await c.request<p.ProduceResponse>(
    0,
    version,
    produceRequest(parts, opts.acks ?? -1, opts.transactionalId ?? null),
  )
  return res.body.responses.flatMap((t) =>
    t.partitionResponses.map((x) => ({ ...x, topic: version >= 13 ? t.topicId : t.name })),
  )
}

export interface FetchPartition {
  readonly topic: string
  readonly partition: number
  readonly offset: number
  readonly maxBytes?: number
  readonly currentLeaderEpoch?: number
  readonly topicId?: string
}

export interface FetchOptions {
  readonly version?: number
  readonly maxWaitMs?: number
  readonly minBytes?: number
  readonly maxBytes?: number
  readonly isolationLevel?: number
  readonly sessionId?: number
  readonly sessionEpoch?: number
  readonly replicaId?: number
  /** ForgottenTopicsData: partitions leaving an incremental fetch session. */
  readonly forgotten?: readonly {
    readonly topic?: string
    readonly topicId?: string
    readonly partitions: number[]
  }[]
}

export function fetchRequest(parts: readonly FetchPartition[], o: FetchOptions = {}) {
  const topics = new Map<string, FetchPartition[]>()
  for (const x of parts) {
    const key = x.topicId ?? x.topic
    topics.set(key, [...(topics.get(key) ?? []), x])
  }
  return p.createFetchRequest({
    replicaId: o.replicaId ?? -1,
    replicaState: p.createFetchRequestReplicaState({ replicaId: o.replicaId ?? -1 }),
    maxWaitMs: o.maxWaitMs ?? 0,
    minBytes: o.minBytes ?? 1,
    maxBytes: o.maxBytes ?? 52428800,
    isolationLevel: o.isolationLevel ?? 0,
    sessionId: o.sessionId ?? 0,
    sessionEpoch: o.sessionEpoch ?? -1,
    topics: [...topics.values()].map((ps) =>
      p.createFetchRequestFetchTopic({
        topic: ps[0].topicId === undefined ? ps[0].topic : '',
        topicId: ps[0].topicId,
        partitions: ps.map((x) =>
          p.createFetchRequestFetchPartition({
            partition: x.partition,
            currentLeaderEpoch: x.currentLeaderEpoch ?? -1,
            fetchOffset: BigInt(x.offset),
            partitionMaxBytes: x.maxBytes ?? 1048576,
          }),
        ),
      }),
    ),
    forgottenTopicsData: (o.forgotten ?? []).map((f) =>
      p.createFetchRequestForgottenTopic({
        topic: f.topic ?? '',
        topicId: f.topicId,
        partitions: f.partitions,
      }),
    ),
  })
}

export type FetchAnswer = Omit<p.FetchResponsePartitionData, 'records'> & {
  topic: string
  records: Uint8Array
}

export async function fetch(
  c: WireClient,
  parts: readonly FetchPartition[],
  o: FetchOptions = {},
): Promise<{ errorCode: number; sessionId: number; partitions: FetchAnswer[] }> {
  const version = o.version ?? 12
  const res = await c.request<p.FetchResponse>(1, version, fetchRequest(parts, o))
  return {
    errorCode: res.body.errorCode,
    sessionId: res.body.sessionId,
    partitions: res.body.responses.flatMap((t) =>
      t.partitions.map((x) => ({
        ...x,
        records: x.records ?? new Uint8Array(0),
        topic: version >= 13 ? t.topicId : t.topic,
      })),
    ),
  }
}

/** ListOffsets v11 for one partition. */
export async function listOffset(
  c: WireClient,
  topic: string,
  partition: number,
  timestamp: number,
  isolationLevel = 0,
  version = 11,
): Promise<{ errorCode: number; offset: number; timestamp: number; leaderEpoch: number }> {
  const res = await c.request<p.ListOffsetsResponse>(2, version, {
    replicaId: -1,
    isolationLevel,
    topics: [
      p.createListOffsetsRequestListOffsetsTopic({
        name: topic,
        partitions: [
          p.createListOffsetsRequestListOffsetsPartition({
            partitionIndex: partition,
            timestamp: BigInt(timestamp),
          }),
        ],
      }),
    ],
  })
  const x = res.body.topics[0].partitions[0]
  return {
    errorCode: x.errorCode,
    offset: Number(x.offset),
    timestamp: Number(x.timestamp),
    leaderEpoch: x.leaderEpoch,
  }
}

/** CreateTopics v7 with the given configs; returns the error codes. */
export async function createTopics(
  c: WireClient,
  topics: readonly { name: string; partitions?: number; configs?: Record<string, string> }[],
): Promise<number[]> {
  const res = await c.request<{ topics: { errorCode: number }[] }>(19, 7, {
    topics: topics.map((t) => ({
      name: t.name,
      numPartitions: t.partitions ?? 1,
      replicationFactor: -1,
      assignments: [],
      configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
    })),
    timeoutMs: 10000,
    validateOnly: false,
  })
  return res.body.topics.map((t) => t.errorCode)
}

/**
 * Creates `topic` with `partitions` partitions and produces `perPartition` records (`k<i>`/`v<i>`,
 * timestamp 0) into each, failing on any error code.
 */
export async function createFilledTopic(
  c: WireClient,
  topic: string,
  partitions: number,
  perPartition: number,
): Promise<void> {
  const created = await createTopics(c, [{ name: topic, partitions }])
  if (created[0] !== 0) throw new Error(`CreateTopics ${topic} answered ${created[0]}`)
  for (let p = 0; p < partitions; p++) {
    const records = makeBatch(
      Array.from({ length: perPartition }, (_, i) => ({ key: `k${i}`, value: `v${i}`, timestamp: 0 })),
    )
    const [r] = await produce(c, [{ topic, partition: p, records }])
    if (r?.errorCode !== 0) throw new Error(`Produce ${topic}-${p} answered ${r?.errorCode}`)
  }
}

/**
 * Produces `batches` rounds to every partition of each topic (one Produce per round and topic),
 * each batch `records` keyless records with the values `value` gives and timestamps from T0 + 0;
 * fails on any error code. For tests that need many large answers.
 */
export async function fillPartitions(
  c: WireClient,
  topics: readonly string[],
  o: {
    readonly partitions: number
    readonly batches: number
    readonly records: number
    readonly value: (topic: string, partition: number, batch: number, i: number) => string
  },
): Promise<void> {
  for (const topic of topics)
    for (let batch = 0; batch < o.batches; batch++) {
      const answers = await produce(
        c,
        Array.from({ length: o.partitions }, (_, partition) => ({
          topic,
          partition,
          records: makeBatch(
            Array.from({ length: o.records }, (_, i) => ({
              key: null,
              value: o.value(topic, partition, batch, i),
              timestamp: 1_700_000_000_000 + i,
            })),
          ),
        })),
      )
      assert.ok(
        answers.every((a) => a.errorCode === 0),
        `Produce to ${topic}: ${answers.map((a) => a.errorCode)}`,
      )
    }
}

/** Waits until `cond` holds, polling every 10 ms; fails naming `what` after `ms`. */
export async function until(what: string, cond: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`not in ${ms} ms: ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Every partition of `topic` from offset 0. */
export const everyPartition = (topic: string, partitions: number): FetchPartition[] =>
  Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 0 }))

/**
 * The next Fetch v12 answer on a socket that carries nothing else, read as its bytes arrive (for
 * tests that pause and resume the socket); rejects after `timeoutMs` or when the socket closes.
 */
export function fetchAnswerOn(
  socket: Socket,
  correlationId: number,
  timeoutMs = 120_000,
): Promise<p.FetchResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let got = 0
    let size = -1
    const timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)
    const onData = (chunk: Buffer) => {
      chunks.push(chunk)
      got += chunk.length
      if (size < 0 && got >= 4) size = Buffer.concat(chunks).readInt32BE(0)
      if (size < 0 || got < 4 + size) return
      clearTimeout(timer)
      socket.off('data', onData)
      try {
        const answer = decodeResponse<p.FetchResponse>(1, 12, Buffer.concat(chunks).subarray(4))
        assert.equal(answer.correlationId, correlationId)
        resolve(answer.body)
      } catch (e) {
        reject(e)
      }
    }
    socket.on('data', onData)
    socket.once('close', () => reject(new Error('closed before the answer')))
  })
}
