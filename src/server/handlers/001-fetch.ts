// Fetch (key 1): serves v4–v18 to consumers; v13+ names topics by id. Kafka's steps
// (KafkaApis.handleFetchRequest, ReplicaManager.fetchMessages, data-plane.md §6):
//   1. IsolationLevel other than 0 or 1: the whole request fails with INVALID_REQUEST, logged at
//      DEBUG. Kafka's IsolationLevel.forId throws there, which Kafka answers UNKNOWN_SERVER_ERROR
//      and logs as an unexpected error; the value is the client's mistake, not a server fault.
//   2. Fetch sessions (v7+, KIP-227; src/server/data/fetch-sessions.ts): SessionEpoch 0 is a full
//      fetch that creates a session when the cache has room, -1 a full fetch without one (a
//      nonzero SessionId is closed first in both); another epoch is incremental in a session:
//      FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH or FETCH_SESSION_TOPIC_ID_ERROR at
//      the top with no partitions, or the fetch covers the session's partitions (the request's
//      added or updated, its forgotten removed) in session order. Steps 3–6 run over the
//      partitions the fetch covers.
//   3. A follower fetch (ReplicaId, or ReplicaState.ReplicaId from v15, ≥ 0) needs CLUSTER_ACTION
//      (else TOPIC_AUTHORIZATION_FAILED everywhere); one node has no followers, so with it every
//      partition answers NOT_LEADER_OR_FOLLOWER, or UNKNOWN_LEADER_EPOCH when it names an epoch.
//   4. Per partition, before reading: an unknown topic id (v13+) UNKNOWN_TOPIC_ID, no READ on the
//      topic TOPIC_AUTHORIZATION_FAILED, an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION
//      (a session's partition keeps its topic's name: once the topic is deleted it answers this).
//   5. Read the others in order: a session's partition whose topic's id is no longer the one it
//      was fetched by (the topic was deleted and made again) INCONSISTENT_TOPIC_ID;
//      CurrentLeaderEpoch older than the partition's epoch FENCED_LEADER_EPOCH, newer
//      UNKNOWN_LEADER_EPOCH; then the log answers OFFSET_OUT_OF_RANGE
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
// The answer lists the partitions read first, then those refused at step 4, each group in the
// fetch's order, consecutive partitions of a topic sharing a topic entry (as Kafka builds it); an
// incremental answer keeps only the partitions that changed (records, high watermark, log start
// offset, an error) since the session last sent them. A records field is empty or starts with a
// whole batch; the log ends it at a batch boundary, never cutting the last batch (a documented difference from Kafka, which may send a partial last batch).
import type { IsolationLevel, PartitionLog, ReadResult } from '../../log/index.js'
import { invalidRequest } from '../../protocol/api-error.js'
import { ErrorCode, errorName } from '../../protocol/errors.js'
import type { FetchRequest } from '../../protocol/generated/messages/FetchRequest.js'
import {
  createFetchResponse,
  createFetchResponsePartitionData,
  type FetchResponse,
  type FetchResponsePartitionData,
} from '../../protocol/generated/messages/FetchResponse.js'
import { CLUSTER_NAME } from '../auth/acl.js'
import { isFailedFetch } from '../data/broker-topic-metrics.js'
import {
  answerContext,
  type FetchContext,
  type FetchTarget,
  newFetchContext,
  sessionTargets,
} from '../data/fetch-sessions.js'
import { groupByTopic, TopicAuthorizations, toBigInt, toNumber } from '../data/requests.js'
import { defineHandler, type RequestContext } from '../router.js'

/** A partition that passed step 4, with its log. */
interface Readable {
  readonly wanted: FetchTarget
  readonly log: PartitionLog
  /** A session's partition whose topic now has another id (step 5's INCONSISTENT_TOPIC_ID). */
  readonly inconsistent: boolean
}

interface Answer {
  readonly wanted: FetchTarget
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

// Topic entries: by id from v13 (a session may hold a deleted topic's id and its remade one's).
const topicKeyOf = (a: Answer): string => a.wanted.name ?? a.wanted.topicId
const topicIdKeyOf = (a: Answer): string => a.wanted.topicId
const dataOf = (a: Answer): FetchResponsePartitionData => a.data

function response(
  answers: readonly Answer[],
  byId: boolean,
  errorCode: number = ErrorCode.NONE,
  sessionId = 0,
): FetchResponse {
  return createFetchResponse({
    errorCode,
    sessionId,
    responses: groupByTopic(answers, byId ? topicIdKeyOf : topicKeyOf, dataOf, (_key, partitions, first) => ({
      topic: byId ? '' : (first.wanted.name ?? ''),
      topicId: first.wanted.topicId,
      partitions,
    })),
  })
}

const nameOfId =
  (ctx: RequestContext) =>
  (topicId: string): string | null =>
    ctx.server.topics.byId(topicId)?.name ?? null

/** The partitions the fetch covers: the session's, or the request's (topics named by id from v13). */
function targetsOf(
  context: FetchContext,
  request: FetchRequest,
  ctx: RequestContext,
  byId: boolean,
): Iterable<FetchTarget> {
  if (context.kind === 'incremental') return sessionTargets(context.session, nameOfId(ctx))
  const topics = ctx.server.topics
  const targets: FetchTarget[] = []
  for (const t of request.topics) {
    const name = byId ? (topics.byId(t.topicId)?.name ?? null) : t.topic
    for (const p of t.partitions) targets.push({ topicId: t.topicId, name, p })
  }
  return targets
}

/** Step 4: every partition either refused or readable. */
function sortOut(targets: Iterable<FetchTarget>, ctx: RequestContext, byId: boolean) {
  const auth = new TopicAuthorizations(ctx)
  const topics = ctx.server.topics
  const refused: Answer[] = []
  const readable: Readable[] = []
  for (const wanted of targets) {
    const { name, p } = wanted
    if (name !== null) ctx.server.data.metrics.record('totalFetch', name)
    let error: number | null = null
    let log: PartitionLog | undefined
    let inconsistent = false
    if (name === null) error = ErrorCode.UNKNOWN_TOPIC_ID
    else if (!auth.allowed('READ', name)) error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    else {
      const topic = topics.byName(name)
      log =
        topic !== undefined && p.partition >= 0 && p.partition < topic.numPartitions
          ? ctx.server.data.partition(name, p.partition)
          : undefined
      if (log === undefined) error = ctx.server.data.missingPartitionError(name, p.partition)
      else inconsistent = byId && topic?.topicId !== wanted.topicId
    }
    if (error !== null || log === undefined) refused.push({ wanted, data: failed(p.partition, error ?? 3) })
    else readable.push({ wanted, log, inconsistent })
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
  const { metrics, config, logs } = ctx.server.data
  const answers: Answer[] = []
  let bytes = 0
  let failedRead = false
  let minOneMessage = true
  for (const r of readable) {
    const { log, wanted: w } = r
    const p = w.p
    const epoch = log.leaderEpoch
    let data: FetchResponsePartitionData
    if (r.inconsistent) data = failed(p.partition, ErrorCode.INCONSISTENT_TOPIC_ID)
    else if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch !== epoch) {
      data = failed(
        p.partition,
        p.currentLeaderEpoch < epoch ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH,
      )
    } else {
      // The room left by the bytes held and those other reads under way have reserved: requests
      // that arrive together read in turns, each seeing what the others took.
      const room = config.fetchMaxBufferedBytes - logs.lentReadBytes()
      const maxBytes = Math.max(0, Math.min(p.partitionMaxBytes, limit - bytes, room))
      const release = logs.reserveReadBytes(maxBytes)
      let r: ReadResult
      try {
        r = await log.read(toNumber(p.fetchOffset), maxBytes, { minOneMessage, isolationLevel, loans })
      } finally {
        release()
      }
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
          metrics.record('bytesOut', log.topic, r.records.byteLength)
        }
      }
    }
    if (data.errorCode !== ErrorCode.NONE) {
      failedRead = true
      if (isFailedFetch(data.errorCode)) metrics.record('failedFetch', log.topic)
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
      for (const r of readable) {
        const p = r.wanted.p
        available += Math.min(
          r.log.bytesAvailable(toNumber(p.fetchOffset), isolationLevel),
          p.partitionMaxBytes,
        )
        if (available >= minBytes) return finish()
      }
    }
    const timer = setTimeout(finish, maxWaitMs)
    for (const r of readable)
      unsubscribe.push(r.log.addListener((event) => (event === 'append' ? check() : finish())))
    unsubscribe.push(data.onShutdown(finish))
    if (data.stopping) finish()
    else check()
  })
}

/**
 * The record bytes this Fetch may carry: its MaxBytes within fetch.max.bytes, and within what
 * fetch.max.buffered.bytes leaves of the bytes read for answers not yet written (clients that do
 * not read their sockets hold theirs). At 0 the answer still carries its first batch whole. Each
 * partition's read checks the room again (readAll), as requests read concurrently.
 */
function fetchLimit(request: FetchRequest, ctx: RequestContext): number {
  const { config, logs } = ctx.server.data
  const room = config.fetchMaxBufferedBytes - logs.lentReadBytes()
  return Math.max(0, Math.min(request.maxBytes, config.fetchMaxBytes, room))
}

/** The answer to send: the context keeps or drops each answered partition and names the session. */
function answer(context: FetchContext, answers: readonly Answer[], ctx: RequestContext, byId: boolean) {
  const sent = answerContext(ctx.server.data.fetchSessions, context, answers, Date.now())
  const logger = ctx.server.logger
  if (context.kind !== 'error' && logger.isLevelEnabled('debug')) {
    logger.debug(
      { sessionId: sent.sessionId, errorCode: sent.errorCode },
      `${context.kind === 'incremental' ? 'Incremental' : context.kind === 'full' ? 'Full' : 'Sessionless'} fetch context with session id ${sent.sessionId} returning ${sent.answers.length} partition(s)`,
    )
  }
  return response(sent.answers, byId, sent.errorCode, sent.sessionId)
}

const count = (topics: readonly { partitions: readonly unknown[] }[]): number =>
  topics.reduce((n, t) => n + t.partitions.length, 0)

/** Kafka's FetchManager DEBUG lines: the context a request got. */
function logContext(context: FetchContext, request: FetchRequest, ctx: RequestContext): void {
  const { sessionId, sessionEpoch } = request
  const text =
    context.kind === 'error'
      ? `Session error for ${sessionId}: ${errorName(context.errorCode)} (epoch ${sessionEpoch})`
      : context.kind === 'incremental'
        ? `Created a new incremental FetchContext for session id ${sessionId}, epoch ${context.session.epoch}: ${count(request.topics)} added or updated, ${count(request.forgottenTopicsData)} forgotten, ${context.session.size} in the session`
        : `Created a new ${context.kind} FetchContext${sessionId !== 0 ? `, closing session id ${sessionId}` : ''}`
  ctx.server.logger.debug({ sessionId, sessionEpoch, clientId: ctx.clientId }, text)
}

async function serve(
  request: FetchRequest,
  context: FetchContext,
  ctx: RequestContext,
  byId: boolean,
  isolationLevel: IsolationLevel,
): Promise<FetchResponse> {
  const limit = fetchLimit(request, ctx)
  const minBytes = Math.min(request.minBytes, limit)
  let { refused, readable } = sortOut(targetsOf(context, request, ctx, byId), ctx, byId)
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
    ;({ refused, readable } = sortOut(targetsOf(context, request, ctx, byId), ctx, byId))
    read = await readAll(readable, fetchLimit(request, ctx), isolationLevel, ctx, loans)
  }
  return answer(context, refused.length === 0 ? read.answers : [...read.answers, ...refused], ctx, byId)
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
    const replicaId = version >= 15 ? request.replicaState.replicaId : request.replicaId
    const context = newFetchContext(
      ctx.server.data.fetchSessions,
      {
        version,
        sessionId: request.sessionId,
        sessionEpoch: request.sessionEpoch,
        isFollower: replicaId >= 0,
      },
      request.topics,
      request.forgottenTopicsData,
      nameOfId(ctx),
      Date.now(),
    )
    if (ctx.server.logger.isLevelEnabled('debug')) logContext(context, request, ctx)
    if (context.kind === 'error') return response([], byId, context.errorCode)
    // 3.
    if (replicaId >= 0) {
      const clusterAction = ctx.server.authorizer.authorize(
        ctx.principal,
        'CLUSTER_ACTION',
        'CLUSTER',
        CLUSTER_NAME,
      )
      const answers: Answer[] = []
      for (const wanted of targetsOf(context, request, ctx, byId)) {
        const error = !clusterAction
          ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
          : wanted.name === null
            ? ErrorCode.UNKNOWN_TOPIC_ID
            : wanted.p.currentLeaderEpoch >= 0
              ? ErrorCode.UNKNOWN_LEADER_EPOCH
              : ErrorCode.NOT_LEADER_OR_FOLLOWER
        answers.push({ wanted, data: failed(wanted.p.partition, error) })
      }
      return answer(context, answers, ctx, byId)
    }
    // 4–6.
    return serve(request, context, ctx, byId, isolationLevel)
  },
  errorResponse(request, errorCode, ctx) {
    return errorResponse(request, errorCode, ctx.apiVersion >= 13)
  },
})
