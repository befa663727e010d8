// Fetch (key 1): serves v4–v18 to consumers; v13+ names topics by id. Kafka's steps
// (KafkaApis.handleFetchRequest, ReplicaManager.fetchMessages, data-plane.md §6):
//   1. IsolationLevel other than 0 or 1: the whole request fails with INVALID_REQUEST, logged at
//      DEBUG. Kafka's IsolationLevel.forId throws there, which Kafka answers UNKNOWN_SERVER_ERROR
//      and logs as an unexpected error; the value is the client's mistake, not a server fault.
//   2. Fetch sessions (v7+, KIP-227). This broker never creates a session, which is valid Kafka
//      behaviour (a full session cache looks the same): a full fetch (SessionEpoch 0 or -1, any
//      SessionId) gets a full answer with SessionId 0; any other epoch is an incremental fetch in
//      a session that does not exist: FETCH_SESSION_ID_NOT_FOUND at the top, no partitions.
//   3. A follower fetch (ReplicaId, or ReplicaState.ReplicaId from v15, ≥ 0) needs CLUSTER_ACTION
//      (else TOPIC_AUTHORIZATION_FAILED everywhere); one node has no followers, so with it every
//      partition answers NOT_LEADER_OR_FOLLOWER, or UNKNOWN_LEADER_EPOCH when it names an epoch.
//   4. Per partition, before reading: an unknown topic id (v13+) UNKNOWN_TOPIC_ID, no READ on the
//      topic TOPIC_AUTHORIZATION_FAILED, an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION.
//   5. Read the others in request order: CurrentLeaderEpoch older than the partition's epoch
//      FENCED_LEADER_EPOCH, newer UNKNOWN_LEADER_EPOCH; then the log answers OFFSET_OUT_OF_RANGE
//      or whole batches from the one holding FetchOffset up to the high watermark
//      (read_uncommitted) or the last stable offset (read_committed, with the aborted
//      transactions). Size limits (KIP-74): the response may carry min(MaxBytes, fetch.max.bytes),
//      each partition min(PartitionMaxBytes, what is left); until a partition returned data the
//      first batch comes whole even when larger than both.
//   6. Answer at once when MaxWaitMs ≤ 0, nothing was left to read, a read failed, or at least
//      MinBytes (capped at the response limit) were read. Otherwise the request waits, woken by the
//      logs' appends (no timer spins): when the bytes available from the fetch positions (each
//      capped at its PartitionMaxBytes) reach MinBytes, when a partition is truncated, moves its
//      log start, goes offline or is deleted, at MaxWaitMs, or when the server stops. Then steps
//      4–5 run again and their answer is sent.
// The answer lists the partitions read first, then those refused at step 4, each group in request
// order, consecutive partitions of a topic sharing a topic entry (as Kafka builds it). A records
// field is empty or starts with a whole batch; the log ends it at a batch boundary, never cutting
// the last batch (a documented difference from Kafka, which may send a partial last batch).
import type { IsolationLevel, PartitionLog } from '../../log/index.js'
import { invalidRequest } from '../../protocol/api-error.js'
import { ErrorCode } from '../../protocol/errors.js'
import type {
  FetchRequest,
  FetchRequestFetchPartition,
} from '../../protocol/generated/messages/FetchRequest.js'
import {
  createFetchResponse,
  createFetchResponsePartitionData,
  type FetchResponse,
  type FetchResponsePartitionData,
} from '../../protocol/generated/messages/FetchResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { groupByTopic, resolveTopic, TopicAuthorizations, toBigInt, toNumber } from '../data/requests.js'
import { isFailedFetch } from '../data/broker-topic-metrics.js'
import { defineHandler, type RequestContext } from '../router.js'

/** One partition of the request. */
interface Wanted {
  /** Topic name, or the id's text when an id names no topic (grouping key). */
  readonly key: string
  readonly name: string
  readonly topicId: string
  readonly p: FetchRequestFetchPartition
}

/** A partition that passed step 4, with its log. */
interface Readable extends Wanted {
  readonly log: PartitionLog
}

interface Answer {
  readonly wanted: Wanted
  readonly data: FetchResponsePartitionData
}

function failed(partitionIndex: number, errorCode: number): FetchResponsePartitionData {
  return createFetchResponsePartitionData({
    partitionIndex,
    errorCode,
    highWatermark: -1n,
    lastStableOffset: -1n,
    logStartOffset: -1n,
    abortedTransactions: null,
  })
}

const topicKeyOf = (a: Answer): string => a.wanted.key
const dataOf = (a: Answer): FetchResponsePartitionData => a.data

function response(
  answers: readonly Answer[],
  byId: boolean,
  errorCode: number = ErrorCode.NONE,
): FetchResponse {
  return createFetchResponse({
    errorCode,
    sessionId: 0,
    responses: groupByTopic(answers, topicKeyOf, dataOf, (_key, partitions, first) => ({
      topic: byId ? '' : first.wanted.name,
      topicId: first.wanted.topicId,
      partitions,
    })),
  })
}

/** Step 4: every partition either refused or readable. */
function sortOut(request: FetchRequest, ctx: RequestContext, byId: boolean) {
  const auth = new TopicAuthorizations(ctx)
  const refused: Answer[] = []
  const readable: Readable[] = []
  for (const t of request.topics) {
    const topic = resolveTopic(ctx, byId, t.topic, t.topicId)
    for (const p of t.partitions) {
      const wanted: Wanted = {
        key: topic.name ?? t.topicId,
        name: topic.name ?? t.topic,
        topicId: t.topicId,
        p,
      }
      if (topic.name !== null) ctx.server.data.metrics.record('totalFetch', topic.name)
      let error: number | null = null
      let log: PartitionLog | undefined
      if (topic.name === null) error = ErrorCode.UNKNOWN_TOPIC_ID
      else if (!auth.allowed('READ', topic.name)) error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
      else {
        log =
          p.partition >= 0 && p.partition < topic.numPartitions
            ? ctx.server.data.partition(topic.name, p.partition)
            : undefined
        if (log === undefined) error = ctx.server.data.missingPartitionError(topic.name, p.partition)
      }
      if (error !== null || log === undefined) refused.push({ wanted, data: failed(p.partition, error ?? 3) })
      else readable.push({ ...wanted, log })
    }
  }
  return { refused, readable }
}

/** Step 5: reads the partitions in order; returns the answers, the bytes read and whether a read failed. */
async function readAll(
  readable: readonly Readable[],
  limit: number,
  isolationLevel: IsolationLevel,
  ctx: RequestContext,
  loans: (() => void)[],
): Promise<{ answers: Answer[]; bytes: number; failedRead: boolean }> {
  const metrics = ctx.server.data.metrics
  const answers: Answer[] = []
  let bytes = 0
  let failedRead = false
  let minOneMessage = true
  for (const w of readable) {
    const { log, p } = w
    const epoch = log.leaderEpoch
    let data: FetchResponsePartitionData
    if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch !== epoch) {
      data = failed(
        p.partition,
        p.currentLeaderEpoch < epoch ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH,
      )
    } else {
      const maxBytes = Math.max(0, Math.min(p.partitionMaxBytes, limit - bytes))
      const r = await log.read(toNumber(p.fetchOffset), maxBytes, { minOneMessage, isolationLevel, loans })
      if (r.errorCode !== ErrorCode.NONE) data = failed(p.partition, r.errorCode)
      else {
        data = createFetchResponsePartitionData({
          partitionIndex: p.partition,
          errorCode: ErrorCode.NONE,
          highWatermark: toBigInt(r.highWatermark),
          lastStableOffset: toBigInt(r.lastStableOffset),
          logStartOffset: toBigInt(r.logStartOffset),
          abortedTransactions:
            r.abortedTransactions === null
              ? null
              : r.abortedTransactions.map((a) => ({
                  producerId: toBigInt(a.producerId),
                  firstOffset: toBigInt(a.firstOffset),
                })),
          records: r.records,
        })
        if (r.records.byteLength > 0) {
          minOneMessage = false
          bytes += r.records.byteLength
          metrics.record('bytesOut', w.name, r.records.byteLength)
        }
      }
    }
    if (data.errorCode !== ErrorCode.NONE) {
      failedRead = true
      if (isFailedFetch(data.errorCode)) metrics.record('failedFetch', w.name)
    }
    answers.push({ wanted: w, data })
  }
  return { answers, bytes, failedRead }
}

/**
 * Step 6's wait: resolves when the bytes available reach `minBytes`, a partition changes in a way
 * other than an append, `maxWaitMs` passes or the server stops. Nothing runs in between: the logs
 * call back on change.
 */
function waitForData(
  readable: readonly Readable[],
  minBytes: number,
  maxWaitMs: number,
  isolationLevel: IsolationLevel,
  ctx: RequestContext,
): Promise<void> {
  const data = ctx.server.data
  return new Promise((resolve) => {
    const unsubscribe: (() => void)[] = []
    let done = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      for (const off of unsubscribe) off()
      resolve()
    }
    const check = () => {
      let available = 0
      for (const w of readable) {
        available += Math.min(
          w.log.bytesAvailable(toNumber(w.p.fetchOffset), isolationLevel),
          w.p.partitionMaxBytes,
        )
        if (available >= minBytes) return finish()
      }
    }
    const timer = setTimeout(finish, maxWaitMs)
    for (const w of readable)
      unsubscribe.push(w.log.addListener((event) => (event === 'append' ? check() : finish())))
    unsubscribe.push(data.onShutdown(finish))
    if (data.stopping) finish()
    else check()
  })
}

/**
 * The record bytes this Fetch may carry: its MaxBytes within fetch.max.bytes, and within what
 * fetch.max.buffered.bytes leaves of the bytes read for answers not yet written (clients that do
 * not read their sockets hold theirs). At 0 the answer still carries its first batch whole.
 */
function fetchLimit(request: FetchRequest, ctx: RequestContext): number {
  const { config, logs } = ctx.server.data
  const room = config.fetchMaxBufferedBytes - logs.lentReadBytes()
  return Math.max(0, Math.min(request.maxBytes, config.fetchMaxBytes, room))
}

async function serve(
  request: FetchRequest,
  ctx: RequestContext,
  byId: boolean,
  isolationLevel: IsolationLevel,
): Promise<FetchResponse> {
  const limit = fetchLimit(request, ctx)
  const minBytes = Math.min(request.minBytes, limit)
  let { refused, readable } = sortOut(request, ctx, byId)
  // The records may be read into lent buffers: the answer references them, so they go back once
  // its socket write has completed (the router hands ctx.loans to the connection).
  const loans: (() => void)[] = []
  ctx.loans = loans
  let read = await readAll(readable, limit, isolationLevel, ctx, loans)
  const atOnce =
    request.maxWaitMs <= 0 ||
    readable.length === 0 ||
    read.failedRead ||
    read.bytes >= minBytes ||
    ctx.server.data.stopping
  if (!atOnce) {
    // The first read's records are not answered: their buffers go back before the wait.
    for (const giveBack of loans.splice(0)) giveBack()
    await waitForData(readable, minBytes, request.maxWaitMs, isolationLevel, ctx)
    ;({ refused, readable } = sortOut(request, ctx, byId))
    read = await readAll(readable, fetchLimit(request, ctx), isolationLevel, ctx, loans)
  }
  return response([...read.answers, ...refused], byId)
}

/**
 * Kafka's getErrorResponse: the error at the top and, below v13, on every partition of the request
 * too (clients of those versions may look only there).
 */
function errorResponse(request: FetchRequest, errorCode: number, byId: boolean): FetchResponse {
  return createFetchResponse({
    errorCode,
    sessionId: request.sessionId,
    responses: byId
      ? []
      : request.topics.map((t) => ({
          topic: t.topic,
          topicId: t.topicId,
          partitions: t.partitions.map((p) => failed(p.partition, errorCode)),
        })),
  })
}

export const handler = defineHandler({
  apiKey: 1,
  minVersion: 4,
  maxVersion: 18,
  handle(request, ctx) {
    const version = ctx.apiVersion
    const byId = version >= 13
    // 1.
    if (request.isolationLevel !== 0 && request.isolationLevel !== 1) {
      throw invalidRequest(`Unknown isolation level ${request.isolationLevel}`)
    }
    const isolationLevel: IsolationLevel =
      request.isolationLevel === 1 ? 'read_committed' : 'read_uncommitted'
    // 2.
    if (version >= 7 && request.sessionEpoch !== 0 && request.sessionEpoch !== -1) {
      return response([], byId, ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
    }
    // 3.
    const replicaId = version >= 15 ? request.replicaState.replicaId : request.replicaId
    if (replicaId >= 0) {
      const clusterAction = ctx.server.authorizer.authorize(
        ctx.principal,
        'CLUSTER_ACTION',
        'CLUSTER',
        CLUSTER_NAME,
      )
      const answers: Answer[] = []
      for (const t of request.topics) {
        const topic = resolveTopic(ctx, byId, t.topic, t.topicId)
        for (const p of t.partitions) {
          const error = !clusterAction
            ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
            : topic.name === null
              ? ErrorCode.UNKNOWN_TOPIC_ID
              : p.currentLeaderEpoch >= 0
                ? ErrorCode.UNKNOWN_LEADER_EPOCH
                : ErrorCode.NOT_LEADER_OR_FOLLOWER
          answers.push({
            wanted: { key: topic.name ?? t.topicId, name: topic.name ?? t.topic, topicId: t.topicId, p },
            data: failed(p.partition, error),
          })
        }
      }
      return response(answers, byId)
    }
    // 4–6.
    return serve(request, ctx, byId, isolationLevel)
  },
  errorResponse(request, errorCode, ctx) {
    return errorResponse(request, errorCode, ctx.apiVersion >= 13)
  },
})
