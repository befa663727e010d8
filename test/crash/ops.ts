/**
 * The operations of the crash-point campaign. Each one prepares what it needs (`setup`), then
 * drives the operation over real TCP clients (`drive`, lanes that run until the process dies or
 * their work is done), recording every acknowledgement in the run's Observations; the process is
 * killed with SIGKILL after a seeded number of acknowledgements plus a seeded delay (`kill`). After
 * the restart, `converge` does what the clients would do next (retry what was in flight, finish the
 * deletes and conversions, wait for the transactions to complete) on the restarted server.
 */
import { ErrorCode } from '../../src/protocol/errors.js'
import type * as p from '../../src/protocol/index.js'
import { Rng } from '../../tools/fuzz/rng.js'
import { createTopics, listOffset, makeBatch, produce } from '../helpers/data-plane.js'
import { deleteGroups, joinMember, push } from '../helpers/kip1331.js'
import { classicJoin } from '../helpers/kip1331-conversion.js'
import { WireClient } from '../server/wire-client.js'
import {
  type Observations,
  type PartitionKind,
  type PartitionObs,
  partitionKey,
  type TxnObs,
} from './model.js'

export interface DriveContext {
  readonly port: number
  readonly rng: Rng
  readonly obs: Observations
  /** Counts an acknowledgement (the kill trigger counts them). */
  ack(): void
  /** Connections to close after the kill. */
  readonly opened: { close(): void }[]
  /** Unexpected answers (not a lost connection): each is a violation of the run. */
  readonly problems: string[]
}

export interface ConvergeContext {
  readonly port: number
  readonly obs: Observations
  readonly problems: string[]
}

export interface KillTrigger {
  /** Kill once this many acknowledgements came (0: from the start of `drive`)… */
  readonly afterAcks: number
  /** …and this many milliseconds more. */
  readonly delayMs: number
}

export interface CrashOp {
  readonly name: string
  readonly description: string
  /** Settings of the killed process only (background jobs that the operation is about). */
  readonly processSettings: Readonly<Record<string, string>>
  setup(ctx: DriveContext): Promise<void>
  drive(ctx: DriveContext): Promise<void>
  kill(rng: Rng): KillTrigger
  converge(ctx: ConvergeContext): Promise<void>
}

async function connect(port: number, opened: { close(): void }[]): Promise<WireClient> {
  const c = await WireClient.connect(port)
  opened.push(c)
  return c
}

/** Runs `lanes` copies of `lane` until each ends (a lost connection ends a lane quietly). */
async function lanes(
  ctx: DriveContext,
  n: number,
  lane: (i: number, rng: Rng) => Promise<void>,
): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      lane(i, new Rng(ctx.rng.u32())).catch((e: unknown) => {
        if (!isConnectionLoss(e)) ctx.problems.push(`lane ${i}: ${(e as Error).stack ?? e}`)
      }),
    ),
  )
}

function isConnectionLoss(e: unknown): boolean {
  const m = String((e as Error)?.message ?? e)
  return /connection closed|ECONNREFUSED|ECONNRESET|EPIPE|socket|closed/i.test(m)
}

// ---- KIP-1331 operations ----

/** A member joins `groupId`, is asked for its description, pushes it; records what was acknowledged. */
async function joinAndPush(
  ctx: DriveContext,
  groupId: string,
): Promise<import('../helpers/streams-member.js').StreamsMember> {
  const o = ctx.obs.group(groupId)
  const m = await joinMember(ctx.port, groupId)
  ctx.opened.push(m)
  const hb = await m.heartbeat()
  if (hb.errorCode !== 0) {
    ctx.problems.push(`${groupId}: heartbeat answered ${hb.errorCode}`)
    return m
  }
  o.members.set(m.memberId, hb.memberEpoch)
  o.maxGroupEpoch = Math.max(o.maxGroupEpoch, hb.memberEpoch)
  if (!hb.topologyDescriptionRequired) {
    ctx.problems.push(`${groupId}: a new group did not ask for its description`)
    return m
  }
  const r = await push(m.client, groupId, m.memberId, 0)
  if (r.errorCode === 0) {
    o.ackedStored = 0
    o.touched = false
    ctx.ack()
  } else ctx.problems.push(`${groupId}: push answered ${r.errorCode} ${r.errorMessage ?? ''}`)
  return m
}

/** Empty groups with a stored description (acknowledged), made before the kill window. */
async function storedEmptyGroups(ctx: DriveContext, prefix: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`)
  for (const id of ids) {
    const m = await joinAndPush(ctx, id)
    const left = await m.leave()
    if (left.errorCode !== 0) ctx.problems.push(`${id}: leave answered ${left.errorCode}`)
  }
  return ids
}

const topologyPush: CrashOp = {
  name: 'push',
  description: 'topology pushes: members join new streams groups and push their descriptions',
  processSettings: {},
  async setup() {},
  async drive(ctx) {
    await lanes(ctx, 3, async (lane) => {
      for (let i = 0; ; i++) await joinAndPush(ctx, `push-${lane}-${i}`)
    })
  },
  kill: (rng) => ({ afterAcks: rng.int(12), delayMs: rng.int(40) }),
  async converge() {},
}

const GROUPS = 12

const deleteGroupsOp: CrashOp = {
  name: 'delete',
  description: 'DeleteGroups of empty streams groups holding a stored description',
  processSettings: {},
  async setup(ctx) {
    await storedEmptyGroups(ctx, 'del', GROUPS)
  },
  async drive(ctx) {
    const ids = [...ctx.obs.groups.keys()]
    await lanes(ctx, 2, async (lane) => {
      const c = await connect(ctx.port, ctx.opened)
      for (const id of ids.filter((_, i) => i % 2 === lane)) {
        // In flight, the delete may complete without its answer: the group may be gone.
        Object.assign(ctx.obs.group(id), { touched: true, mayVanish: true })
        const [r] = await deleteGroups(c, [id])
        if (r.errorCode === 0) {
          ctx.obs.group(id).gone = true
          ctx.ack()
        } else ctx.problems.push(`${id}: DeleteGroups answered ${r.errorCode}`)
      }
    })
  },
  kill: (rng) => ({ afterAcks: rng.int(GROUPS), delayMs: rng.int(30) }),
  async converge(ctx) {
    const c = await WireClient.connect(ctx.port)
    try {
      for (const [id, o] of ctx.obs.groups) {
        if (o.gone) continue
        const [r] = await deleteGroups(c, [id])
        // GROUP_ID_NOT_FOUND: the delete in flight at the kill completed (the checker then finds
        // neither the group nor its description).
        if (r.errorCode === 0 || (o.mayVanish && r.errorCode === ErrorCode.GROUP_ID_NOT_FOUND)) o.gone = true
        else ctx.problems.push(`${id}: DeleteGroups after the restart answered ${r.errorCode}`)
      }
    } finally {
      c.close()
    }
  },
}

const cleanupCycle: CrashOp = {
  name: 'cleanup',
  description: 'the cleanup cycle (every 100 ms) reclaiming the descriptions of groups that became empty',
  processSettings: { 'offsets.retention.check.interval.ms': '100' },
  async setup() {},
  async drive(ctx) {
    await lanes(ctx, 2, async (lane) => {
      for (let i = 0; ; i++) {
        const id = `cln-${lane}-${i}`
        const m = await joinAndPush(ctx, id)
        const o = ctx.obs.group(id)
        o.touched = true
        o.mayVanish = true
        await m.leave()
        m.close()
        // Let the cycle find it empty before the next one.
        await new Promise((r) => setTimeout(r, 30))
      }
    })
  },
  kill: (rng) => ({ afterAcks: rng.int(10), delayMs: rng.int(250) }),
  async converge() {},
}

const conversion: CrashOp = {
  name: 'conversion',
  description: 'classic JoinGroups converting empty streams groups that hold a stored description',
  processSettings: {},
  async setup(ctx) {
    await storedEmptyGroups(ctx, 'cnv', GROUPS)
  },
  async drive(ctx) {
    const ids = [...ctx.obs.groups.keys()]
    await lanes(ctx, 2, async (lane) => {
      const c = await connect(ctx.port, ctx.opened)
      for (const id of ids.filter((_, i) => i % 2 === lane)) {
        Object.assign(ctx.obs.group(id), { touched: true, mayVanish: true })
        const r = await classicJoin(c, id, '')
        if (r.errorCode === ErrorCode.MEMBER_ID_REQUIRED) {
          ctx.obs.group(id).gone = true
          ctx.ack()
        } else ctx.problems.push(`${id}: the converting JoinGroup answered ${r.errorCode}`)
      }
    })
  },
  kill: (rng) => ({ afterAcks: rng.int(GROUPS), delayMs: rng.int(30) }),
  async converge(ctx) {
    const c = await WireClient.connect(ctx.port)
    try {
      for (const [id, o] of ctx.obs.groups) {
        if (o.gone) continue
        const r = await classicJoin(c, id, '')
        if (r.errorCode === ErrorCode.MEMBER_ID_REQUIRED) o.gone = true
        else ctx.problems.push(`${id}: the converting JoinGroup after the restart answered ${r.errorCode}`)
      }
    } finally {
      c.close()
    }
  },
}

// ---- data-plane operations ----

async function initProducerId(
  c: WireClient,
  transactionalId: string | null,
): Promise<{ producerId: bigint; producerEpoch: number }> {
  const r = await c.request<p.InitProducerIdResponse>(22, 4, {
    transactionalId,
    transactionTimeoutMs: 3000,
    producerId: -1n,
    producerEpoch: -1,
  })
  if (r.body.errorCode !== 0) throw new Error(`InitProducerId answered ${r.body.errorCode}`)
  return { producerId: r.body.producerId, producerEpoch: r.body.producerEpoch }
}

async function topic(
  ctx: DriveContext,
  name: string,
  partitions: number,
  kind: PartitionKind,
  configs: Record<string, string> = {},
): Promise<PartitionObs[]> {
  const c = await WireClient.connect(ctx.port)
  try {
    const [e] = await createTopics(c, [{ name, partitions, configs }])
    if (e !== 0) throw new Error(`CreateTopics ${name} answered ${e}`)
  } finally {
    c.close()
  }
  return Array.from({ length: partitions }, (_, i) => ctx.obs.partition(name, i, kind))
}

const KEYS = 6

/** The batch of `count` records at sequence `seq` of an idempotent producer on partition `o`. */
function idempotentBatch(
  o: PartitionObs,
  seq: number,
  count: number,
): { batch: Uint8Array; values: string[] } {
  const pr = o.producer!
  const now = Date.now()
  const values = Array.from({ length: count }, (_, i) => `${o.prefix}-${seq + i}`)
  const records = values.map((value, i) => {
    const key = o.kind === 'compact' ? `k${(seq + i) % KEYS}` : null
    if (key !== null) o.keys.set(value, key)
    return { key, value, timestamp: now }
  })
  const batch = makeBatch(records, {
    producerId: Number(pr.producerId),
    producerEpoch: pr.producerEpoch,
    baseSequence: seq,
  })
  return { batch, values }
}

/** Sends one batch and records its acknowledgement; returns the answer's base offset or the error. */
async function sendBatch(
  c: WireClient,
  o: PartitionObs,
  batch: Uint8Array,
  values: string[],
): Promise<{ errorCode: number; baseOffset: number }> {
  for (const v of values) o.inflight.add(v)
  const [a] = await produce(c, [{ topic: o.topic, partition: o.partition, records: batch }])
  if (a.errorCode !== 0) return { errorCode: a.errorCode, baseOffset: -1 }
  const base = Number(a.baseOffset)
  values.forEach((v, i) => {
    o.acked.set(v, base + i)
    o.inflight.delete(v)
  })
  return { errorCode: 0, baseOffset: base }
}

/** An idempotent producer sending batches of 1–4 records to `o` until its connection goes. */
async function produceLane(ctx: DriveContext, o: PartitionObs, rng: Rng, c: WireClient): Promise<void> {
  const pr = o.producer!
  for (;;) {
    const seq = pr.nextSeq
    const { batch, values } = idempotentBatch(o, seq, rng.range(1, 4))
    pr.inflight = { batch, values, seq }
    const r = await sendBatch(c, o, batch, values)
    if (r.errorCode !== 0) {
      ctx.problems.push(`${o.topic}-${o.partition}: Produce at sequence ${seq} answered ${r.errorCode}`)
      return
    }
    pr.nextSeq += values.length
    pr.inflight = undefined
    ctx.ack()
  }
}

/** One lane per partition, all on the connection the producer id was asked on. */
async function driveProducers(ctx: DriveContext): Promise<void> {
  const c = ctx.opened[ctx.opened.length - 1] as WireClient
  const parts = [...ctx.obs.partitions.values()]
  await lanes(ctx, parts.length, (i, rng) => produceLane(ctx, parts[i], rng, c))
}

async function idempotentProducers(ctx: DriveContext, parts: readonly PartitionObs[]): Promise<void> {
  const c = await connect(ctx.port, ctx.opened)
  const pid = await initProducerId(c, null)
  for (const o of parts) o.producer = { ...pid, nextSeq: 0, inflight: undefined }
}

/**
 * After the restart the producer retries its in-flight batch (a duplicate or a first write, never
 * an error), sends the next sequence (accepted), and sends that one again (a duplicate: the same
 * offset, nothing written).
 */
async function retryIdempotent(ctx: ConvergeContext): Promise<void> {
  const c = await WireClient.connect(ctx.port)
  try {
    for (const o of ctx.obs.partitions.values()) {
      const pr = o.producer
      if (pr === undefined) continue
      const name = `${o.topic}-${o.partition}`
      if (pr.inflight !== undefined) {
        const r = await sendBatch(c, o, pr.inflight.batch, pr.inflight.values)
        if (r.errorCode !== 0)
          ctx.problems.push(
            `${name}: the retried batch at sequence ${pr.inflight.seq} answered ${r.errorCode}`,
          )
        else pr.nextSeq = pr.inflight.seq + pr.inflight.values.length
        pr.inflight = undefined
      }
      const { batch, values } = idempotentBatch(o, pr.nextSeq, 2)
      const first = await sendBatch(c, o, batch, values)
      if (first.errorCode !== 0) {
        ctx.problems.push(
          `${name}: the next sequence ${pr.nextSeq} after the restart answered ${first.errorCode}`,
        )
        continue
      }
      pr.nextSeq += values.length
      const again = await sendBatch(c, o, batch, values)
      if (again.errorCode !== 0 || again.baseOffset !== first.baseOffset)
        ctx.problems.push(
          `${name}: a duplicate of the batch at offset ${first.baseOffset} answered ${again.errorCode} at offset ${again.baseOffset} (not deduplicated)`,
        )
    }
  } finally {
    c.close()
  }
}

const sustainedProduce: CrashOp = {
  name: 'produce',
  description: 'sustained idempotent produce (acks=all) to 3 partitions',
  processSettings: {},
  async setup(ctx) {
    await idempotentProducers(ctx, await topic(ctx, 'produce', 3, 'log'))
  },
  drive: driveProducers,
  kill: (rng) => ({ afterAcks: rng.int(150), delayMs: rng.int(20) }),
  converge: retryIdempotent,
}

const retention: CrashOp = {
  name: 'retention',
  description: 'idempotent produce while retention deletes segments by bytes and by time',
  processSettings: { 'log.retention.check.interval.ms': '50' },
  async setup(ctx) {
    const bytes = await topic(ctx, 'ret-bytes', 1, 'retention', {
      'segment.index.bytes': '64',
      'index.interval.bytes': '0',
      'retention.bytes': '1800',
      'file.delete.delay.ms': '0',
    })
    const time = await topic(ctx, 'ret-time', 1, 'retention', {
      'segment.index.bytes': '64',
      'index.interval.bytes': '0',
      'retention.ms': '150',
      'file.delete.delay.ms': '0',
    })
    await idempotentProducers(ctx, [...bytes, ...time])
  },
  drive: driveProducers,
  kill: (rng) => ({ afterAcks: rng.int(200), delayMs: rng.int(20) }),
  converge: retryIdempotent,
}

const compaction: CrashOp = {
  name: 'compaction',
  description: 'idempotent produce of 6 keys while the cleaner compacts and swaps segments',
  processSettings: { 'log.cleaner.backoff.ms': '10' },
  async setup(ctx) {
    const parts = await topic(ctx, 'compacted', 2, 'compact', {
      'cleanup.policy': 'compact',
      'segment.index.bytes': '64',
      'index.interval.bytes': '0',
      'min.cleanable.dirty.ratio': '0.01',
      'min.compaction.lag.ms': '0',
      'file.delete.delay.ms': '0',
    })
    await idempotentProducers(ctx, parts)
  },
  drive: driveProducers,
  kill: (rng) => ({ afterAcks: rng.int(200), delayMs: rng.int(20) }),
  converge: retryIdempotent,
}

const transaction: CrashOp = {
  name: 'transaction',
  description: 'transactions writing 2 partitions, committed (60 %) or aborted, back to back',
  processSettings: {},
  async setup(ctx) {
    await topic(ctx, 'txn', 2, 'txn')
  },
  async drive(ctx) {
    const parts = [...ctx.obs.partitions.values()]
    await lanes(ctx, 2, async (lane, rng) => {
      const c = await connect(ctx.port, ctx.opened)
      const transactionalId = `crash-tx-${lane}`
      const { producerId, producerEpoch } = await initProducerId(c, transactionalId)
      const seqs = parts.map(() => 0)
      for (let n = 0; ; n++) {
        const add = await c.request<p.AddPartitionsToTxnResponse>(24, 3, {
          v3AndBelowTransactionalId: transactionalId,
          v3AndBelowProducerId: producerId,
          v3AndBelowProducerEpoch: producerEpoch,
          v3AndBelowTopics: [{ name: 'txn', partitions: parts.map((x) => x.partition) }],
        })
        const addErrors = add.body.resultsByTopicV3AndBelow.flatMap((t) =>
          t.resultsByPartition.map((x) => x.partitionErrorCode),
        )
        if (addErrors.some((e) => e !== 0)) {
          ctx.problems.push(`${transactionalId}: AddPartitionsToTxn answered ${addErrors}`)
          return
        }
        const t: TxnObs = { transactionalId, values: new Map(), outcome: 'unknown' }
        ctx.obs.txns.push(t)
        for (const [i, o] of parts.entries()) {
          const count = rng.range(1, 3)
          const values = Array.from(
            { length: count },
            (_, k) => `${transactionalId}.${n}.${o.partition}-${k}`,
          )
          t.values.set(partitionKey(o.topic, o.partition), values)
          const batch = makeBatch(
            values.map((value) => ({ key: null, value, timestamp: Date.now() })),
            { producerId: Number(producerId), producerEpoch, baseSequence: seqs[i], transactional: true },
          )
          for (const v of values) o.inflight.add(v)
          const [a] = await produce(c, [{ topic: o.topic, partition: o.partition, records: batch }], {
            transactionalId,
          })
          if (a.errorCode !== 0) {
            ctx.problems.push(`${transactionalId}: transactional Produce answered ${a.errorCode}`)
            return
          }
          seqs[i] += count
        }
        const committed = rng.chance(0.6)
        const end = await c.request<p.EndTxnResponse>(26, 3, {
          transactionalId,
          producerId,
          producerEpoch,
          committed,
        })
        if (end.body.errorCode !== 0) {
          ctx.problems.push(`${transactionalId}: EndTxn answered ${end.body.errorCode}`)
          return
        }
        t.outcome = committed ? 'committed' : 'aborted'
        ctx.ack()
      }
    })
  },
  kill: (rng) => ({ afterAcks: rng.int(15), delayMs: rng.int(30) }),
  async converge(ctx) {
    // A prepared transaction completes on load; an open one is aborted once its timeout (3 s)
    // passes. Wait until no partition has an open transaction.
    const c = await WireClient.connect(ctx.port)
    try {
      const end = Date.now() + 30_000
      // The coordinator holds none open (one whose partitions were added but nothing written yet
      // leaves the logs stable while it waits for its timeout)…
      for (;;) {
        const { body } = await c.request<p.ListTransactionsResponse>(66, 0, {
          stateFilters: ['Ongoing', 'PrepareCommit', 'PrepareAbort', 'PrepareEpochFence'],
          producerIdFilters: [],
        })
        if (body.errorCode === 0 && body.transactionStates.length === 0) break
        if (Date.now() > end) {
          ctx.problems.push(
            `transactions still open 30 s after the restart: ${body.transactionStates.map((x) => `${x.transactionalId} ${x.transactionState}`)}`,
          )
          break
        }
        await new Promise((r) => setTimeout(r, 100))
      }
      // …and no partition has one open.
      for (const o of ctx.obs.partitions.values()) {
        for (;;) {
          const lso = (await listOffset(c, o.topic, o.partition, -1, 1)).offset
          const hw = (await listOffset(c, o.topic, o.partition, -1, 0)).offset
          if (lso === hw) break
          if (Date.now() > end) {
            ctx.problems.push(`${o.topic}-${o.partition}: a transaction is still open 30 s after the restart`)
            break
          }
          await new Promise((r) => setTimeout(r, 100))
        }
      }
    } finally {
      c.close()
    }
  },
}

export const OPERATIONS: readonly CrashOp[] = [
  topologyPush,
  deleteGroupsOp,
  cleanupCycle,
  conversion,
  sustainedProduce,
  retention,
  compaction,
  transaction,
]
