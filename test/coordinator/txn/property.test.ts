/**
 * The transaction shard against the state table of the specification (§3.2): random sequences of
 * every operation, with producer ids and epochs drawn near the right ones, never write a transition
 * the table forbids; epochs never go backwards for a producer id and a new producer id is always
 * fresh; completed transactions have no partitions; and the state is always what its records say.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  isExpirationAllowed,
  TransactionState as S,
  type TxnMarkerIntent,
  type TxnRecord,
  VALID_PREVIOUS_STATES,
} from '../../../src/coordinator/txn/index.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import { snapshot, TxnHarness } from './harness.js'

const IDS = ['a', 'b'] as const
const id = fc.constantFrom(...IDS)
/** How a request picks its producer id and epoch relative to the coordinator's (mostly right). */
const pidChoice = fc.oneof(
  { weight: 12, arbitrary: fc.constant('current') },
  { weight: 1, arbitrary: fc.constant('previous') },
  { weight: 1, arbitrary: fc.constant('other') },
)
const epochChoice = fc.oneof(
  { weight: 10, arbitrary: fc.constant('current') },
  { weight: 2, arbitrary: fc.constant('minus1') },
  { weight: 1, arbitrary: fc.constant('plus1') },
  { weight: 1, arbitrary: fc.constant('last') },
  { weight: 1, arbitrary: fc.constant('exhausted') },
)
const topics = fc.array(
  fc.record({
    topic: fc.constantFrom('t', 'u'),
    partitions: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }),
  }),
  { maxLength: 2 },
)

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary })
const op = fc.oneof(
  w(
    4,
    fc.record({
      kind: fc.constant('init' as const),
      id,
      withProducer: fc.boolean(),
      pid: pidChoice,
      epoch: epochChoice,
    }),
  ),
  w(
    5,
    fc.record({
      kind: fc.constant('add' as const),
      id,
      pid: pidChoice,
      epoch: epochChoice,
      topics,
      tv: fc.constantFrom(0, 2),
    }),
  ),
  w(1, fc.record({ kind: fc.constant('offsets' as const), id, pid: pidChoice, epoch: epochChoice })),
  w(1, fc.record({ kind: fc.constant('verify' as const), id, pid: pidChoice, epoch: epochChoice, topics })),
  w(
    5,
    fc.record({
      kind: fc.constant('end' as const),
      id,
      pid: pidChoice,
      epoch: epochChoice,
      committed: fc.boolean(),
      tv: fc.constantFrom(0, 2),
    }),
  ),
  w(4, fc.record({ kind: fc.constant('complete' as const), which: fc.nat(), stale: fc.boolean() })),
  w(1, fc.record({ kind: fc.constant('timeouts' as const) })),
  w(1, fc.record({ kind: fc.constant('expire' as const) })),
  w(2, fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 15000 }) })),
  w(1, fc.record({ kind: fc.constant('reload' as const) })),
  w(1, fc.record({ kind: fc.constant('noIds' as const), on: fc.boolean() })),
  w(1, fc.record({ kind: fc.constant('exhaust' as const), id })),
)
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never

function run(level: number, ops: readonly Op[]): void {
  const h = new TxnHarness({ transactionalIdExpirationMs: 60000, transactionMaxTimeoutMs: 20000 })
  h.level = level
  let now = 1_700_000_000_000
  /** Markers handed out and not yet completed (the service's queue). */
  const markers: TxnMarkerIntent[] = []
  /** Which transactional id each producer id ever belonged to. */
  const owner = new Map<bigint, string>()
  /** The highest epoch written per producer id. */
  const maxEpoch = new Map<bigint, number>()

  const pick = (txnId: string, p: string, e: string) => {
    const md = h.shard.transaction(txnId)
    const producerId =
      md === undefined ? 77n : p === 'current' ? md.producerId : p === 'previous' ? md.prevProducerId : 99n
    const cur = md?.producerEpoch ?? 0
    const producerEpoch =
      e === 'current'
        ? cur
        : e === 'minus1'
          ? cur - 1
          : e === 'plus1'
            ? cur + 1
            : e === 'last'
              ? (md?.lastProducerEpoch ?? 0)
              : 32766
    return {
      producerId: producerId < 0n ? 5n : producerId,
      producerEpoch: Math.max(0, Math.min(32767, producerEpoch)),
    }
  }

  /** Checks every record against the table before replaying it, then the state after. */
  const apply = <T>(r: { records: readonly TxnRecord[]; response: T }): T => {
    for (const rec of r.records) {
      const txnId = rec.key.transactionalId
      const before = h.shard.transaction(txnId)
      if (rec.value === null) {
        assert.ok(
          before !== undefined && isExpirationAllowed(before.state),
          `tombstone for ${txnId} in ${before?.state}`,
        )
      } else {
        const v = rec.value
        const to = v.transactionStatus as S
        assert.ok(to !== S.DEAD && to !== S.PREPARE_EPOCH_FENCE, `state ${to} written`)
        if (before === undefined) assert.equal(to, S.EMPTY, `first record of ${txnId} is ${to}`)
        else
          assert.ok(VALID_PREVIOUS_STATES.get(to)!.has(before.state), `${before.state} → ${to} for ${txnId}`)
        // Epochs only grow per producer id; a producer id serves one transactional id and starts at 0.
        const known = owner.get(v.producerId)
        if (known === undefined) {
          assert.equal(v.producerEpoch, 0, `new producer id ${v.producerId} at epoch ${v.producerEpoch}`)
          owner.set(v.producerId, txnId)
        } else {
          assert.equal(known, txnId, `producer id ${v.producerId} reused`)
          assert.ok(v.producerEpoch >= maxEpoch.get(v.producerId)!, `epoch of ${v.producerId} went back`)
        }
        maxEpoch.set(v.producerId, Math.max(v.producerEpoch, maxEpoch.get(v.producerId) ?? 0))
        if (v.nextProducerId !== -1n) assert.ok(!owner.has(v.nextProducerId), 'next producer id is fresh')
        if (to === S.EMPTY) assert.equal(v.transactionPartitions, null)
        if (to === S.COMPLETE_COMMIT || to === S.COMPLETE_ABORT) assert.deepEqual(v.transactionPartitions, [])
        if (to === S.EMPTY) assert.equal(v.transactionStartTimestampMs, -1n)
      }
      h.log.push(rec)
      h.shard.replay(rec)
      const after = h.shard.transaction(txnId)
      if (after !== undefined && (after.state === S.COMPLETE_COMMIT || after.state === S.COMPLETE_ABORT)) {
        assert.equal(after.topicPartitions.size, 0, 'a completed transaction keeps partitions')
      }
    }
    return r.response
  }

  const takeMarkers = (m: TxnMarkerIntent | null) => {
    if (m === null) return
    const md = h.shard.transaction(m.transactionalId)!
    // The markers name the Prepare record's partitions, producer and epoch.
    assert.ok(md.state === S.PREPARE_COMMIT || md.state === S.PREPARE_ABORT)
    assert.equal(m.committed, md.state === S.PREPARE_COMMIT)
    assert.equal(m.producerEpoch, md.producerEpoch)
    markers.push(m)
  }

  for (const o of ops) {
    now += 1
    switch (o.kind) {
      case 'init': {
        const p = o.withProducer ? pick(o.id, o.pid, o.epoch) : { producerId: -1n, producerEpoch: -1 }
        const r = apply(
          h.shard.initProducerId({ transactionalId: o.id, transactionTimeoutMs: 10000, ...p }, now),
        )
        assert.notEqual(r.errorCode === ErrorCode.NONE, r.producerEpoch === -1)
        takeMarkers(r.markers)
        break
      }
      case 'add':
        apply(
          h.shard.addPartitions(
            {
              transactionalId: o.id,
              ...pick(o.id, o.pid, o.epoch),
              topics: o.topics,
              clientTransactionVersion: o.tv,
            },
            now,
          ),
        )
        break
      case 'offsets':
        apply(h.shard.addOffsets({ transactionalId: o.id, ...pick(o.id, o.pid, o.epoch), groupId: 'g' }, now))
        break
      case 'verify':
        h.shard.verifyPartitions({ transactionalId: o.id, ...pick(o.id, o.pid, o.epoch), topics: o.topics })
        break
      case 'end': {
        const before = h.shard.transaction(o.id)
        const r = apply(
          h.shard.endTxn(
            {
              transactionalId: o.id,
              ...pick(o.id, o.pid, o.epoch),
              committed: o.committed,
              clientTransactionVersion: o.tv,
            },
            now,
          ),
        )
        takeMarkers(r.markers)
        if (r.markers !== null && o.tv === 2) {
          // TV2 answers with what the client uses next: a higher epoch, or epoch 0 of a new id.
          assert.ok(
            (r.producerId === before!.producerId && r.producerEpoch === before!.producerEpoch + 1) ||
              (r.producerId !== before!.producerId && r.producerEpoch === 0),
          )
        }
        break
      }
      case 'complete': {
        if (markers.length === 0) break
        const [m] = markers.splice(o.which % markers.length, 1)
        const r = apply(
          h.shard.completeTransaction(
            {
              transactionalId: m!.transactionalId,
              producerId: m!.producerId,
              producerEpoch: o.stale ? m!.producerEpoch - 1 : m!.producerEpoch,
              committed: m!.committed,
            },
            now,
          ),
        )
        if (o.stale) assert.equal(r.completed, false)
        break
      }
      case 'timeouts':
        for (const m of apply(h.shard.abortTimedOutTransactions(now)).markers) takeMarkers(m)
        break
      case 'expire':
        now += 60000
        apply(h.shard.expireTransactionalIds(now))
        break
      case 'tick':
        now += o.ms
        break
      case 'reload':
        h.reload()
        // Markers in flight are lost with the process; loading finds them again.
        markers.length = 0
        for (const m of h.shard.pendingMarkers()) markers.push(m)
        break
      case 'noIds':
        h.ids.exhausted = o.on
        break
      case 'exhaust': {
        // Move an idle id to epoch 32766 (as 32766 InitProducerIds would), to exercise rotation.
        const md = h.shard.transaction(o.id)
        if (md === undefined || md.state !== S.EMPTY) break
        h.seed({ ...md, producerEpoch: Math.max(md.producerEpoch, 32766), prevProducerId: md.producerId })
        maxEpoch.set(md.producerId, 32766)
        break
      }
    }
    // Replay equivalence: the records alone give the live state.
    assert.deepEqual(snapshot(h.replayed()), snapshot(h.shard))
  }
  // And from their stored bytes (lastProducerEpoch is not stored).
  const live = snapshot(h.shard, true)
  h.reload()
  assert.deepEqual(snapshot(h.shard, true), live)
}

describe('transaction shard: property tests against the state table', () => {
  for (const level of [0, 1, 2]) {
    it(`random operation sequences keep the invariants (transaction.version ${level})`, () => {
      fc.assert(
        fc.property(fc.array(op, { minLength: 30, maxLength: 80 }), (ops) => run(level, ops)),
        { numRuns: 150 },
      )
    })
  }
})
