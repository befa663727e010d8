// Produce (key 0): serves v3–v13 and advertises v0–v13, as Kafka 4.x does (librdkafka needs the 0;
// a v0–v2 request is refused like any unserved version: the connection is closed). v13 names topics
// by id. Every partition goes through the steps of data-plane.md §3.1:
//   1. A transactional batch (the first batch of any partition) needs a TransactionalId with WRITE
//      on it; otherwise every partition answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
//   2. v13: a topic id no topic has: UNKNOWN_TOPIC_ID.
//   3. WRITE on the topic, else TOPIC_AUTHORIZATION_FAILED.
//   4. An unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION (Produce never creates topics).
//   5. Acks other than -1, 0, 1: INVALID_REQUIRED_ACKS for every partition whose records are framed
//      right (one complete magic-2 batch); the others keep their INVALID_RECORD / CORRUPT_MESSAGE.
//   6. An internal topic, unless the client is Kafka's admin client: INVALID_TOPIC_EXCEPTION.
//   7. The log validates and appends (framing, offsets, size, CRC, records, timestamps,
//      recompression, producer state: rows 5–24); appends of one partition run in call order, and
//      every append of this request is started before any is awaited, so a connection's requests
//      reach each partition in the order they arrived. The log writes the appends of one turn to a
//      partition together (docs/log.md, "Append"): a partition is answered once its batch is
//      written, and a connection's Produce requests without a transactional id are pipelined
//      (router.ts, `pipelinedRequest`), so those of one socket read share the write.
//   8. Before 7, a transactional batch's partition must be in its producer's transaction
//      (transactions.md §5.2): v12+ (transaction version 2) adds it to the transaction, earlier
//      versions ask whether it was added; the coordinator's answer is translated as §5.3 says,
//      CONCURRENT_TRANSACTIONS being retried for up to 100 ms from v12 (every 20 ms, or as soon as
//      the previous transaction of the id is complete when that is what it waits for). The
//      partitions of one request go to the coordinator in one call, as Kafka's
//      AddPartitionsToTxnManager sends one request per transaction. A partition where the producer
//      already has its transaction open at the batch's epoch skips the coordinator (Kafka's
//      verification guard, `UnifiedLog.hasOngoingTransaction`).
// Acks 0: no response; if a partition failed the connection is closed instead, so the producer
// refreshes its metadata. Acks 1 and -1 answer after the append (one node: the in-sync replica set
// is this node, so -1 never waits and never fails with NOT_ENOUGH_REPLICAS or REQUEST_TIMED_OUT).
// The KIP-951 CurrentLeader / NodeEndpoints tags go only with NOT_LEADER_OR_FOLLOWER, which one
// node never answers, so they stay at their defaults.
import type { AppendOptions, AppendResult, PartitionLog } from '../../log/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { ProduceRequest } from '../../protocol/generated/messages/ProduceRequest.js'
import {
  createProduceResponse,
  type ProduceResponse,
  type ProduceResponsePartitionProduceResponse,
} from '../../protocol/generated/messages/ProduceResponse.js'
import { isInternalTopic } from '../../protocol/topics.js'
import { groupByTopic, resolveTopic, TopicAuthorizations, toBigInt } from '../data/requests.js'
import { isBytesRejected, isFailedProduce } from '../data/broker-topic-metrics.js'
import { CloseConnection, defineHandler, NO_RESPONSE, type RequestContext } from '../router.js'

const ADMIN_CLIENT_ID = '__admin_client'
const TRANSACTIONAL_FLAG = 0x10

/** One partition of the request with the answer it will get. */
interface Slot {
  /** Topic name, or the id's text when an id names no topic. */
  readonly key: string
  readonly name: string
  readonly topicId: string
  readonly index: number
  readonly records: Uint8Array | null
  answer: ProduceResponsePartitionProduceResponse | Promise<ProduceResponsePartitionProduceResponse> | null
}

/**
 * The parts every answer without record errors shares: an answer is encoded and dropped, never
 * changed, so one frozen empty list and one leader (the KIP-951 default) serve them all.
 */
const NO_RECORD_ERRORS = Object.freeze(
  [],
) as unknown as ProduceResponsePartitionProduceResponse['recordErrors']
const NO_LEADER = Object.freeze({ leaderId: -1, leaderEpoch: -1 })
const NO_NODE_ENDPOINTS = Object.freeze([]) as unknown as ProduceResponse['nodeEndpoints']
const MINUS_ONE = -1n
const ZERO = 0n

/** A log number as a wire int64, without a new BigInt for the common -1 and 0. */
function int64(v: number): bigint {
  return v === -1 ? MINUS_ONE : v === 0 ? ZERO : toBigInt(v)
}

function failed(
  index: number,
  errorCode: number,
  errorMessage: string | null = null,
): ProduceResponsePartitionProduceResponse {
  return {
    index,
    errorCode,
    baseOffset: -1n,
    logAppendTimeMs: -1n,
    logStartOffset: -1n,
    recordErrors: NO_RECORD_ERRORS,
    errorMessage,
    currentLeader: NO_LEADER,
  }
}

function fromAppend(index: number, r: AppendResult): ProduceResponsePartitionProduceResponse {
  return {
    index,
    errorCode: r.errorCode,
    baseOffset: int64(r.baseOffset),
    logAppendTimeMs: int64(r.logAppendTime),
    logStartOffset: int64(r.logStartOffset),
    recordErrors:
      r.recordErrors.length === 0
        ? NO_RECORD_ERRORS
        : r.recordErrors.map((e) => ({
            batchIndex: e.batchIndex,
            batchIndexErrorMessage: e.message,
          })),
    errorMessage: r.errorMessage,
    currentLeader: NO_LEADER,
  }
}

/**
 * Step 7's answer for a partition: the append's result (or the error code of a refused
 * transactional partition), counted in the topic's meters.
 */
function answerOf(
  metrics: RequestContext['server']['data']['metrics'],
  name: string,
  index: number,
  bytes: number,
  r: AppendResult | number,
): ProduceResponsePartitionProduceResponse {
  // A partition the transaction verification refused never reached the log: Kafka counts nothing.
  if (typeof r === 'number') return failed(index, r, r === ErrorCode.INVALID_TXN_STATE ? NOT_ADDED : null)
  if (r.errorCode === ErrorCode.NONE) {
    if (!r.duplicate) {
      metrics.record('bytesIn', name, bytes)
      metrics.record('messagesIn', name, r.lastOffset - r.baseOffset + 1)
    }
  } else {
    if (isFailedProduce(r.errorCode)) metrics.record('failedProduce', name)
    if (isBytesRejected(r.errorCode)) metrics.record('bytesRejected', name, bytes)
  }
  return fromAppend(index, r)
}

const NOT_ADDED = 'Partition was not added to the transaction'
const CONCURRENT_RETRY_MS = 20
const CONCURRENT_RETRY_MAX_MS = 100

/** The producer id and epoch of a transactional first batch, or null (not transactional, too short). */
function transactionOf(records: Uint8Array): { producerId: bigint; producerEpoch: number } | null {
  if (records.byteLength < 61 || !firstBatchTransactional(records)) return null
  const view = new DataView(records.buffer, records.byteOffset, records.byteLength)
  return { producerId: view.getBigInt64(43), producerEpoch: view.getInt16(51) }
}

/**
 * Step 8 for the partitions of one producer in one request: per `topic-partition`, NONE when the
 * partition is in the producer's transaction (added now from v12), else the error the partition
 * answers (transactions.md §5.3).
 */
async function verifyInTransaction(
  ctx: RequestContext,
  transactionalId: string,
  txn: { producerId: bigint; producerEpoch: number },
  partitions: readonly { readonly topic: string; readonly partition: number }[],
): Promise<Map<string, number>> {
  const v = ctx.apiVersion
  const byTopic = new Map<string, number[]>()
  for (const p of partitions) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition])
  const topics = [...byTopic].map(([topic, ps]) => ({ topic, partitions: ps }))
  const input = { transactionalId, ...txn, topics }
  const service = ctx.server.transactions
  const started = Date.now()
  const codes = new Map<string, number>()
  for (;;) {
    if (v >= 12) {
      const code = await service.addPartitionsToTxn({ ...input, clientTransactionVersion: 2 })
      for (const p of partitions) codes.set(`${p.topic}-${p.partition}`, code)
    } else {
      const r = await service.verifyPartitionsInTxn(input)
      for (const t of r.topics)
        for (const p of t.partitions) codes.set(`${t.topic}-${p.partitionIndex}`, p.errorCode)
    }
    if (v < 12 || ![...codes.values()].includes(ErrorCode.CONCURRENT_TRANSACTIONS)) break
    const left = CONCURRENT_RETRY_MAX_MS - (Date.now() - started)
    if (left < CONCURRENT_RETRY_MS) break
    if (service.isCompleting(transactionalId)) {
      // The previous transaction's markers are being written: retry as soon as it is complete.
      await service.waitForCompletion(transactionalId, left)
    } else {
      await new Promise((r) => setTimeout(r, CONCURRENT_RETRY_MS))
    }
  }
  const out = new Map<string, number>()
  for (const p of partitions) {
    const key = `${p.topic}-${p.partition}`
    out.set(key, produceErrorOf(codes.get(key) ?? ErrorCode.UNKNOWN_SERVER_ERROR, v))
  }
  return out
}

/** A transactional partition waiting for the coordinator: appended (or refused) once it answers. */
interface Unverified {
  readonly topic: string
  readonly partition: number
  readonly slot: Slot
  /** Appends the partition's records as verified, or answers the coordinator's error. */
  readonly settle: (
    code: number,
  ) => ProduceResponsePartitionProduceResponse | Promise<ProduceResponsePartitionProduceResponse>
}

/**
 * Collects the transactional partitions of one request while its partitions are gone through, then
 * asks the coordinator once per producer (`run`, after the handler's synchronous pass) and, once it
 * answers, appends that producer's partitions in request order in the same turn.
 */
class TransactionVerifier {
  readonly #ctx: RequestContext
  readonly #transactionalId: string
  readonly #pending = new Map<
    string,
    { txn: { producerId: bigint; producerEpoch: number }; partitions: Unverified[] }
  >()

  constructor(ctx: RequestContext, transactionalId: string) {
    this.#ctx = ctx
    this.#transactionalId = transactionalId
  }

  add(txn: { producerId: bigint; producerEpoch: number }, partition: Unverified): void {
    const key = `${txn.producerId}:${txn.producerEpoch}`
    let group = this.#pending.get(key)
    if (group === undefined) {
      group = { txn, partitions: [] }
      this.#pending.set(key, group)
    }
    group.partitions.push(partition)
  }

  /** Verifies every group, then gives each of its partitions its answer (`slot.answer`). */
  run(): Promise<unknown> {
    return Promise.all(
      [...this.#pending.values()].map(async (g) => {
        const codes = await verifyInTransaction(this.#ctx, this.#transactionalId, g.txn, g.partitions)
        for (const p of g.partitions) {
          p.slot.answer = p.settle(codes.get(`${p.topic}-${p.partition}`) ?? ErrorCode.UNKNOWN_SERVER_ERROR)
        }
      }),
    )
  }
}

/** The coordinator's answer for a partition as a Produce of version `v` answers it (§5.3). */
function produceErrorOf(code: number, v: number): number {
  switch (code) {
    case ErrorCode.NONE:
      return code
    case ErrorCode.PRODUCER_FENCED:
      return ErrorCode.INVALID_PRODUCER_EPOCH
    case ErrorCode.TRANSACTION_ABORTABLE:
      return v >= 11 ? code : ErrorCode.INVALID_TXN_STATE
    case ErrorCode.CONCURRENT_TRANSACTIONS:
      return v >= 12 ? code : ErrorCode.NOT_ENOUGH_REPLICAS
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.NOT_COORDINATOR:
      return ErrorCode.NOT_ENOUGH_REPLICAS
    default:
      return code
  }
}

/** Step 1's test: whether any partition's first batch is transactional. */
function anyTransactional(request: ProduceRequest): boolean {
  for (const t of request.topicData)
    for (const p of t.partitionData) if (firstBatchTransactional(p.records)) return true
  return false
}

/**
 * Whether the first batch of `records` is transactional (ProduceRequest's own test). Only a magic-2
 * batch can be: an old-format message (magic 0 or 1) has its timestamp where a batch keeps its
 * attributes, and is refused later with INVALID_RECORD, as Kafka's legacy batches are never
 * transactional.
 */
function firstBatchTransactional(records: Uint8Array | null): boolean {
  if (records === null || records.byteLength < 23 || records[16] !== 2) return false
  return (records[22] & TRANSACTIONAL_FLAG) !== 0
}

/**
 * Step 5's framing test: null when `records` holds exactly one complete batch of magic 2, else the
 * error the partition keeps (CORRUPT_MESSAGE for an impossible magic or length, INVALID_RECORD
 * otherwise).
 */
function framingError(records: Uint8Array | null): number | null {
  if (records === null || records.byteLength < 17) return ErrorCode.INVALID_RECORD
  const view = new DataView(records.buffer, records.byteOffset, records.byteLength)
  const length = view.getInt32(8)
  if (length < 14 || records[16] > 2) return ErrorCode.CORRUPT_MESSAGE
  if (records[16] !== 2) return ErrorCode.INVALID_RECORD
  const end = 12 + length
  // Bytes after the batch that do not form a whole batch are dropped by the log; a second whole
  // batch is INVALID_RECORD.
  if (end > records.byteLength) return ErrorCode.INVALID_RECORD
  if (records.byteLength - end >= 12) {
    const next = view.getInt32(end + 8)
    if (next >= 14 && end + 12 + next <= records.byteLength) return ErrorCode.INVALID_RECORD
  }
  return null
}

const slotKeyOf = (s: Slot): string => s.key

/**
 * The log's options for a Produce append. The records are a view of the request's frame, which
 * nothing reads after the handler: the log rewrites a batch it keeps as it is in place instead of
 * copying it. The appends of a turn to a partition are written together (`coalesce`), so a
 * partition's answer comes once its write is done (a promise).
 */
function appendOptions(now: number, produceVersion: number, transactionVerified?: boolean): AppendOptions {
  return { now, produceVersion, origin: 'client', transactionVerified, recordsOwned: true, coalesce: true }
}

// The handler's paths that wait (an fsync, the transaction coordinator) keep what they need in
// closures of their own, so that the handler's run for a batch appended at once makes none.

/** A partition's answer once its append's fsync is done. */
function answerLater(
  appended: Promise<AppendResult>,
  metrics: RequestContext['server']['data']['metrics'],
  name: string,
  index: number,
  bytes: number,
): Promise<ProduceResponsePartitionProduceResponse> {
  return appended.then((r) => answerOf(metrics, name, index, bytes, r))
}

/** A transactional partition for the verifier: appended (or refused) once the coordinator answers. */
function verifiedLater(
  log: PartitionLog,
  records: Uint8Array,
  options: AppendOptions,
  metrics: RequestContext['server']['data']['metrics'],
  name: string,
  slot: Slot,
): Unverified {
  const index = slot.index
  const bytes = records.byteLength
  return {
    topic: name,
    partition: index,
    slot,
    settle: (code) => {
      if (code !== ErrorCode.NONE) return answerOf(metrics, name, index, bytes, code)
      const appended = log.append(records, options)
      return appended instanceof Promise
        ? answerLater(appended, metrics, name, index, bytes)
        : answerOf(metrics, name, index, bytes, appended)
    },
  }
}

/**
 * The outcome of a request of one partition (a producer's usual request) once its append is written:
 * one promise for the partition's answer and the request's.
 */
function finishOneLater(
  appended: Promise<AppendResult>,
  acks: number,
  slots: readonly Slot[],
  byId: boolean,
  metrics: RequestContext['server']['data']['metrics'],
  name: string,
  bytes: number,
): Promise<ProduceResponse | typeof NO_RESPONSE | CloseConnection> {
  return appended.then((r) =>
    finished(acks, slots, byId, [answerOf(metrics, name, slots[0].index, bytes, r)]),
  )
}

/** The request's outcome once the partitions' answers that wait have come. */
function finishLater(
  acks: number,
  slots: readonly Slot[],
  byId: boolean,
): Promise<ProduceResponse | typeof NO_RESPONSE | CloseConnection> {
  // One partition (a producer's usual request, answered once its write is done): no Promise.all.
  const only = slots.length === 1 ? slots[0].answer : null
  if (only instanceof Promise) return only.then((answer) => finished(acks, slots, byId, [answer]))
  return Promise.all(slots.map((s) => s.answer)).then((answers) =>
    finished(acks, slots, byId, answers as ProduceResponsePartitionProduceResponse[]),
  )
}

/** Whether the request names one partition of one topic. */
function onlyPartition(request: ProduceRequest): boolean {
  return request.topicData.length === 1 && request.topicData[0].partitionData.length === 1
}

/** The request's outcome once every partition has its answer (acks 0: none, or a close). */
function finished(
  acks: number,
  slots: readonly Slot[],
  byId: boolean,
  answers: ProduceResponsePartitionProduceResponse[],
): ProduceResponse | typeof NO_RESPONSE | CloseConnection {
  if (acks === 0) {
    const bad = answers.find((a) => a.errorCode !== ErrorCode.NONE)
    return bad === undefined
      ? NO_RESPONSE
      : new CloseConnection(
          `Produce with acks=0 failed with error code ${bad.errorCode}; closing the connection`,
        )
  }
  return response(slots, byId, answers)
}

function response(
  slots: readonly Slot[],
  byId: boolean,
  answers: ProduceResponsePartitionProduceResponse[],
): ProduceResponse {
  if (slots.length === 1) {
    // A producer's usual request: the same message, built without the grouping's arrays and closures.
    const only = slots[0]
    return {
      responses: [{ name: byId ? '' : only.name, topicId: only.topicId, partitionResponses: answers }],
      throttleTimeMs: 0,
      nodeEndpoints: NO_NODE_ENDPOINTS,
    }
  }
  const m = createProduceResponse()
  m.responses = groupByTopic(
    slots,
    slotKeyOf,
    (_s, i) => answers[i],
    (_key, partitionResponses, first) => ({
      name: byId ? '' : first.name,
      topicId: first.topicId,
      partitionResponses,
    }),
  )
  return m
}

function errorResponse(request: ProduceRequest, errorCode: number, byId: boolean): ProduceResponse {
  return createProduceResponse({
    responses: request.topicData.map((t) => ({
      name: byId ? '' : t.name,
      topicId: t.topicId,
      partitionResponses: t.partitionData.map((p) => failed(p.index, errorCode)),
    })),
  })
}

export const handler = defineHandler({
  apiKey: 0,
  minVersion: 3,
  maxVersion: 13,
  advertisedMinVersion: 0,
  // Without a transactional id every append starts in `handle`, and the log copies what it writes
  // later (AppendOptions.coalesce); a transactional batch may be appended once the coordinator has
  // answered, from the frame.
  frameFreeWhenPending: (request) => request.transactionalId === null,
  handle(request, ctx) {
    const server = ctx.server
    const data = server.data
    const byId = ctx.apiVersion >= 13
    const acks = request.acks
    const metrics = data.metrics

    // 1. Transactional batches need an authorized transactional id.
    if (anyTransactional(request)) {
      const id = request.transactionalId
      if (id === null || !server.authorizer.authorize(ctx.principal, 'WRITE', 'TRANSACTIONAL_ID', id)) {
        if (acks === 0)
          return new CloseConnection('Produce with acks=0 refused: TRANSACTIONAL_ID_AUTHORIZATION_FAILED')
        return errorResponse(request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, byId)
      }
    }

    // 2–6, then 7 started for every partition before anything is awaited.
    const auth = new TopicAuthorizations(ctx)
    const now = Date.now()
    const slots: Slot[] = []
    let verifier: TransactionVerifier | undefined
    // The log's options for an append that needs no coordinator (made with the first).
    let unverified: AppendOptions | undefined
    for (const t of request.topicData) {
      const topic = resolveTopic(ctx, byId, t.name, t.topicId)
      for (const p of t.partitionData) {
        const slot: Slot = {
          key: topic.name ?? t.topicId,
          name: topic.name ?? t.name,
          topicId: t.topicId,
          index: p.index,
          records: p.records,
          answer: null,
        }
        slots.push(slot)
        if (topic.name === null) {
          slot.answer = failed(p.index, ErrorCode.UNKNOWN_TOPIC_ID)
          continue
        }
        if (!auth.allowed('WRITE', topic.name)) {
          slot.answer = failed(p.index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
          continue
        }
        const log =
          p.index >= 0 && p.index < topic.numPartitions ? data.partition(topic.name, p.index) : undefined
        if (log === undefined) {
          slot.answer = failed(p.index, data.missingPartitionError(topic.name, p.index))
          continue
        }
        metrics.record('totalProduce', topic.name)
        if (acks !== -1 && acks !== 0 && acks !== 1) {
          slot.answer = failed(p.index, framingError(p.records) ?? ErrorCode.INVALID_REQUIRED_ACKS)
          continue
        }
        if (isInternalTopic(topic.name) && ctx.clientId !== ADMIN_CLIENT_ID) {
          slot.answer = failed(
            p.index,
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            `Cannot append to internal topic ${topic.name}`,
          )
          continue
        }
        const records = p.records ?? new Uint8Array(0)
        const name = topic.name
        const index = p.index
        const txn = request.transactionalId !== null ? transactionOf(records) : null
        const ongoing = txn !== null && log.hasOngoingTransaction(Number(txn.producerId), txn.producerEpoch)
        if (txn === null || ongoing) {
          // The log takes the append in this turn (offsets, producer state) and answers once the
          // turn's write of the partition is done; a refused batch is answered at once. A
          // transactional batch whose producer has its transaction open here at this epoch needs
          // no coordinator (Kafka's verification guard): it appends in the same turn as the check.
          const appended = log.append(
            records,
            ongoing
              ? appendOptions(now, ctx.apiVersion, true)
              : (unverified ??= appendOptions(now, ctx.apiVersion)),
          )
          if (appended instanceof Promise && slots.length === 1 && onlyPartition(request)) {
            return finishOneLater(appended, acks, slots, byId, metrics, name, records.byteLength)
          }
          slot.answer =
            appended instanceof Promise
              ? answerLater(appended, metrics, name, index, records.byteLength)
              : answerOf(metrics, name, index, records.byteLength, appended)
        } else {
          verifier ??= new TransactionVerifier(ctx, request.transactionalId!)
          verifier.add(
            txn,
            verifiedLater(log, records, appendOptions(now, ctx.apiVersion, true), metrics, name, slot),
          )
        }
      }
    }

    if (verifier !== undefined) {
      // The transactional partitions get their answers once the coordinator has answered.
      return verifier.run().then(() => finishLater(acks, slots, byId))
    }
    let settled = true
    for (const s of slots) if (s.answer instanceof Promise) settled = false
    if (settled) {
      const answers: ProduceResponsePartitionProduceResponse[] = []
      for (const s of slots) answers.push(s.answer as ProduceResponsePartitionProduceResponse)
      return finished(acks, slots, byId, answers)
    }
    return finishLater(acks, slots, byId)
  },
  errorResponse(request, errorCode, ctx) {
    return errorResponse(request, errorCode, ctx.apiVersion >= 13)
  },
})
