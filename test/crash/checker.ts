/**
 * The one checker of a crash-point run: after a kill -9 and a restart on the same data, it reads the
 * restarted server (its shards, its logs over the wire, the plugin's SQLite file) against what the
 * clients were told before the kill (model.ts) and returns every violation it finds.
 *
 * Coordinator:
 * - KIP-1331 no leak: every description the plugin holds belongs to a streams group whose stored
 *   epoch is not −1 (test/helpers/kip1331-invariants.ts); after a cleanup cycle, none belongs to
 *   an empty group.
 * - KIP-1331 no loss: every group whose stored epoch is ≥ 0 has exactly that epoch in the plugin;
 *   a push answered NONE, with nothing after it that may move the epoch, is still stored.
 * - A deleted (DeleteGroups answered NONE) or converted group is gone, and so is its description.
 * - One owner: no active task or partition is assigned or pending revocation to two members of
 *   one group.
 * - Epochs never go back: a group's epoch is at least the highest a heartbeat answer carried, and
 *   a member's at least the last one it was given.
 *
 * Data plane (each partition the run wrote to, read with Fetch from the log start):
 * - every batch served is whole and its CRC-32C is valid;
 * - every acknowledged record is present exactly once, at the offset it was acknowledged with,
 *   and records appear in send order; nothing is there that was not sent (acknowledged or in
 *   flight); below the log start only retention may have removed records, and on a compacted
 *   topic only a record whose key has a later record;
 * - read_committed shows all of a committed transaction's records and none of an aborted one's;
 *   one whose EndTxn was not answered shows all or none (never part).
 */
import { crc32c } from '@node-rs/crc32'
import type { GroupCoordinatorShard } from '../../src/coordinator/shard/group-coordinator-shard.js'
import {
  batchBody,
  type BatchRecord,
  decodeRecords,
  isCrcValid,
  readBatchHeader,
  splitBatches,
} from '../../src/log/batch.js'
import { decompress } from '../../src/log/compression.js'
import type * as p from '../../src/protocol/index.js'
import { fetchRequest, listOffset } from '../helpers/data-plane.js'
import { checkKip1331Invariants, pluginRows } from '../helpers/kip1331-invariants.js'
import type { TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'
import { doubleOwners } from '../sim/snapshot.js'
import { type Observations, type PartitionObs, partitionKey, seqOf } from './model.js'

export interface ServedRecord {
  readonly offset: number
  readonly key: string | null
  readonly value: string | null
  readonly producerId: number
  readonly transactional: boolean
}

export interface PartitionRead {
  readonly logStartOffset: number
  readonly highWatermark: number
  readonly lastStableOffset: number
  /** Data records (control batches left out), in offset order. */
  readonly records: ServedRecord[]
  /** Violations of the framing rules (partial or corrupt batches). */
  readonly problems: string[]
}

const dec = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b))

/**
 * Reads a whole partition with Fetch (v12) from its log start. read_committed leaves out the
 * batches of aborted transactions, as a consumer does with the answer's aborted list, and stops at
 * the LSO.
 */
export async function readPartition(
  c: WireClient,
  topic: string,
  partition: number,
  isolationLevel: 0 | 1,
): Promise<PartitionRead> {
  const problems: string[] = []
  const records: ServedRecord[] = []
  let offset = 0
  let logStartOffset = 0
  let highWatermark = 0
  let lastStableOffset = 0
  for (let round = 0; round < 10_000; round++) {
    const res = await c.request<p.FetchResponse>(
      1,
      12,
      fetchRequest([{ topic, partition, offset, maxBytes: 4 << 20 }], {
        isolationLevel,
        maxBytes: 8 << 20,
      }),
    )
    const part = res.body.responses[0]?.partitions[0]
    if (part === undefined) throw new Error(`Fetch of ${topic}-${partition}: no partition in the answer`)
    if (part.errorCode === 1) {
      // OFFSET_OUT_OF_RANGE: retention moved the start; read from it (the answer carries no offsets).
      const earliest = await listOffset(c, topic, partition, -2)
      if (earliest.errorCode !== 0 || earliest.offset <= offset)
        throw new Error(
          `Fetch of ${topic}-${partition} at ${offset}: out of range, earliest ${earliest.offset}`,
        )
      offset = earliest.offset
      continue
    }
    if (part.errorCode !== 0) throw new Error(`Fetch of ${topic}-${partition}: error ${part.errorCode}`)
    logStartOffset = Number(part.logStartOffset)
    highWatermark = Number(part.highWatermark)
    lastStableOffset = Number(part.lastStableOffset)
    if (offset < logStartOffset) offset = logStartOffset
    const end = isolationLevel === 1 ? lastStableOffset : highWatermark
    const bytes = part.records ?? new Uint8Array(0)
    const split = splitBatches(bytes)
    if (split.end !== bytes.length)
      problems.push(
        `${topic}-${partition}: a partial batch served at fetch offset ${offset} (${bytes.length - split.end} trailing bytes)`,
      )
    const aborted = [...(part.abortedTransactions ?? [])]
      .map((a) => ({ producerId: Number(a.producerId), firstOffset: Number(a.firstOffset) }))
      .sort((a, b) => a.firstOffset - b.firstOffset)
    const abortedNow = new Set<number>()
    let next = offset
    for (const pos of split.positions) {
      const h = readBatchHeader(bytes, pos)
      if (!isCrcValid(bytes, pos, crc32c)) {
        problems.push(`${topic}-${partition}: batch at offset ${h.baseOffset} has a bad CRC`)
        continue
      }
      const lastOffset = h.baseOffset + h.lastOffsetDelta
      if (lastOffset < offset) continue
      next = Math.max(next, lastOffset + 1)
      const control = (h.attributes & 0x20) !== 0
      const transactional = (h.attributes & 0x10) !== 0
      while (aborted.length > 0 && aborted[0].firstOffset <= h.baseOffset)
        abortedNow.add(aborted.shift()!.producerId)
      if (control) {
        // A marker ends the producer's transaction (an ABORT marker ends its aborted run).
        abortedNow.delete(h.producerId)
        continue
      }
      if (isolationLevel === 1 && transactional && abortedNow.has(h.producerId)) continue
      const codec = h.attributes & 7
      const body = codec === 0 ? batchBody(bytes, pos) : decompress(codec, batchBody(bytes, pos), 1 << 28)
      for (const r of decodeRecords(body, h.recordsCount) as BatchRecord[]) {
        const o = h.baseOffset + r.offsetDelta
        if (o < offset) continue
        records.push({
          offset: o,
          key: dec(r.key),
          value: dec(r.value),
          producerId: h.producerId,
          transactional,
        })
      }
    }
    if (next >= end || split.positions.length === 0) {
      if (next < end)
        problems.push(`${topic}-${partition}: Fetch at ${offset} returned nothing below the end ${end}`)
      break
    }
    offset = next
  }
  return { logStartOffset, highWatermark, lastStableOffset, records, problems }
}

function groupShards(server: TestServer): GroupCoordinatorShard[] {
  const service = server.server.context.coordinator
  const out: GroupCoordinatorShard[] = []
  for (let i = 0; i < service.numShards; i++) {
    const s = service.peekShard(i)
    if (s !== undefined) out.push(s as GroupCoordinatorShard)
  }
  return out
}

/** Coordinator invariants; `pluginDb` is the SQLite file of the topology description plugin. */
export async function checkCoordinator(
  server: TestServer,
  pluginDb: string,
  obs: Observations,
  out: string[],
): Promise<void> {
  const shards = groupShards(server)
  // One owner.
  for (const shard of shards) for (const d of doubleOwners(shard)) out.push(`one owner: ${d}`)
  // Epochs, acknowledged pushes, deletes and conversions.
  const held = pluginRows(pluginDb)
  const findGroup = (id: string) => {
    for (const s of shards) {
      const g = s.streams.group(id)
      if (g !== undefined) return g
    }
    return undefined
  }
  for (const [id, o] of obs.groups) {
    const g = findGroup(id)
    if (o.gone) {
      if (g !== undefined) out.push(`${id}: deleted (acknowledged) but the streams group is back`)
      if (held.has(id))
        out.push(`${id}: deleted (acknowledged) but the plugin still holds epoch ${held.get(id)}`)
      continue
    }
    if (g === undefined) {
      if (!o.mayVanish && (o.maxGroupEpoch > 0 || o.ackedStored !== undefined))
        out.push(`${id}: the streams group was acknowledged (epoch ${o.maxGroupEpoch}) and is gone`)
      continue
    }
    if (g.groupEpoch < o.maxGroupEpoch)
      out.push(`${id}: group epoch went back from ${o.maxGroupEpoch} to ${g.groupEpoch}`)
    for (const [memberId, epoch] of o.members) {
      const m = g.members.get(memberId)
      if (m !== undefined && m.memberEpoch < epoch)
        out.push(`${id}: member ${memberId} epoch went back from ${epoch} to ${m.memberEpoch}`)
    }
    if (o.ackedStored !== undefined && !o.touched) {
      if (g.storedDescriptionTopologyEpoch !== o.ackedStored || held.get(id) !== o.ackedStored)
        out.push(
          `${id}: KIP-1331 loss of an acknowledged push at epoch ${o.ackedStored}: stored ${g.storedDescriptionTopologyEpoch}, the plugin holds ${held.get(id) ?? 'nothing'}`,
        )
    }
  }
  const report = await checkKip1331Invariants(server.server.context.coordinator, pluginDb)
  for (const l of report.leaks) out.push(`KIP-1331 leak: ${l}`)
  for (const l of report.losses) out.push(`KIP-1331 loss: ${l}`)
}

/** After a cleanup cycle: no description of an empty streams group is left in the plugin. */
export async function checkCleanedUp(server: TestServer, pluginDb: string, out: string[]): Promise<void> {
  const service = server.server.context.coordinator
  await service.topologyDescriptions.runCleanupCycle()
  const shards = groupShards(server)
  for (const [id, epoch] of pluginRows(pluginDb)) {
    const g = shards.map((s) => s.streams.group(id)).find((x) => x !== undefined)
    if (g === undefined) out.push(`KIP-1331 leak after a cleanup cycle: ${id}@${epoch}, the group is gone`)
    else if (g.members.size === 0)
      out.push(
        `KIP-1331 leak after a cleanup cycle: ${id}@${epoch}, the group is empty (stored ${g.storedDescriptionTopologyEpoch})`,
      )
  }
}

function checkLog(o: PartitionObs, r: PartitionRead, out: string[]): void {
  const name = `${o.topic}-${o.partition}`
  const seen = new Map<string, number>()
  let lastSeq = -1
  for (const rec of r.records) {
    const v = rec.value
    if (v === null) {
      if (o.kind !== 'compact') out.push(`${name}: a null value at offset ${rec.offset}`)
      continue
    }
    if (seen.has(v)) out.push(`${name}: ${v} is there twice (offsets ${seen.get(v)} and ${rec.offset})`)
    seen.set(v, rec.offset)
    if (!o.acked.has(v) && !o.inflight.has(v))
      out.push(`${name}: ${v} at offset ${rec.offset} was never sent`)
    const ackedAt = o.acked.get(v)
    if (ackedAt !== undefined && ackedAt !== rec.offset)
      out.push(`${name}: ${v} was acknowledged at offset ${ackedAt} and is at ${rec.offset}`)
    const s = seqOf(v)
    if (s <= lastSeq) out.push(`${name}: ${v} at offset ${rec.offset} is out of send order`)
    lastSeq = s
  }
  // Every acknowledged record is there, unless retention removed it (below the log start) or
  // compaction did (a later record of its key is there).
  const lastOfKey = new Map<string, number>()
  if (o.kind === 'compact')
    for (const rec of r.records) if (rec.key !== null) lastOfKey.set(rec.key, rec.offset)
  for (const [v, offset] of o.acked) {
    if (seen.has(v)) continue
    if (o.kind === 'retention' && offset < r.logStartOffset) continue
    if (o.kind === 'compact') {
      const k = o.keys.get(v)
      if (k !== undefined && (lastOfKey.get(k) ?? -1) > offset) continue
    }
    out.push(
      `${name}: acknowledged ${v} (offset ${offset}) is missing (log start ${r.logStartOffset}, high watermark ${r.highWatermark})`,
    )
  }
  if (o.kind === 'retention') {
    // Retention removes whole segments from the start: what is left is dense from the log start.
    let expect = r.logStartOffset
    for (const rec of r.records) {
      if (rec.offset !== expect) {
        out.push(`${name}: offset ${expect} is missing after retention (next is ${rec.offset})`)
        break
      }
      expect++
    }
  }
}

/** Data-plane invariants of every partition the run wrote to; `txnFinal` checks transactions too. */
export async function checkData(
  server: TestServer,
  obs: Observations,
  out: string[],
  options: { readonly transactions: boolean },
): Promise<Map<string, PartitionRead>> {
  const c = await WireClient.connect(server.port)
  const reads = new Map<string, PartitionRead>()
  try {
    for (const [key, o] of obs.partitions) {
      const r = await readPartition(c, o.topic, o.partition, 0)
      reads.set(key, r)
      out.push(...r.problems)
      if (o.kind !== 'txn') checkLog(o, r, out)
    }
    if (!options.transactions || obs.txns.length === 0) return reads
    const committed = new Map<string, Set<string>>()
    for (const [key, o] of obs.partitions) {
      if (o.kind !== 'txn') continue
      const r = await readPartition(c, o.topic, o.partition, 1)
      out.push(...r.problems)
      if (r.lastStableOffset !== r.highWatermark)
        out.push(`${key}: a transaction is still open (LSO ${r.lastStableOffset}, HW ${r.highWatermark})`)
      committed.set(key, new Set(r.records.map((x) => x.value ?? '')))
      // Every record of the log belongs to some transaction of the run, each once.
      const all = new Set<string>()
      for (const x of reads.get(key)?.records ?? []) {
        if (x.value !== null && all.has(x.value)) out.push(`${key}: ${x.value} is there twice`)
        all.add(x.value ?? '')
      }
    }
    for (const t of obs.txns) {
      let visible = 0
      let total = 0
      for (const [key, values] of t.values) {
        const seen = committed.get(key) ?? new Set()
        for (const v of values) {
          total++
          if (seen.has(v)) visible++
        }
      }
      const what = `transaction ${t.transactionalId} (${[...t.values.values()].flat()[0] ?? 'no records'}…, ${t.outcome})`
      if (t.outcome === 'committed' && visible !== total)
        out.push(`${what}: committed but read_committed sees ${visible} of its ${total} records`)
      if (t.outcome === 'aborted' && visible !== 0)
        out.push(`${what}: aborted but read_committed sees ${visible} of its ${total} records`)
      if (t.outcome === 'unknown' && visible !== 0 && visible !== total)
        out.push(`${what}: half visible: read_committed sees ${visible} of its ${total} records`)
    }
  } finally {
    c.close()
  }
  return reads
}

export { partitionKey }
