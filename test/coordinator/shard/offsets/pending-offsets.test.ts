// Pending transactional offsets in the OffsetMetadataManager, run as a shard of the real runtime
// (test/testkit): the exact TxnOffsetCommit records, RequireStable, the marker's records for
// COMMIT and ABORT, repeated and stale markers, a later non-transactional commit winning, the
// expiry and OffsetDelete around pending offsets, dropping one producer epoch's offsets, and replay equivalence after every step, also
// after the store compacted the log.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  type OffsetGroups,
  OffsetMetadataManager,
  type OffsetRecord,
  type TxnOffsetCommitInput,
} from '../../../../src/coordinator/shard/offsets/offset-metadata-manager.js'
import { ErrorCode } from '../../../../src/protocol/errors.js'
import { ShardTestContext } from '../../../testkit/shard-context.js'

type Context = ShardTestContext<OffsetMetadataManager, OffsetRecord>

const CTX = { apiVersion: 5, maxMetadataSize: 10 }
const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ'

const ANY_GROUP: OffsetGroups = {
  validateOffsetCommit: () => ErrorCode.NONE,
  validateTransactionalOffsetCommit: () => ErrorCode.NONE,
  validateOffsetFetch: () => ErrorCode.NONE,
  validateOffsetDelete: () => ErrorCode.NONE,
  isSubscribedToTopic: () => false,
}

function start(): Promise<Context> {
  return ShardTestContext.start({ newShard: () => new OffsetMetadataManager(ANY_GROUP) })
}

function txn(
  producerId: bigint,
  producerEpoch: number,
  offsets: Record<number, bigint>,
): TxnOffsetCommitInput {
  return {
    transactionalId: 't',
    groupId: 'g',
    producerId,
    producerEpoch,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    topics: [
      {
        name: 'foo',
        topicId: TOPIC_ID,
        partitions: Object.entries(offsets).map(([i, o]) => ({
          partitionIndex: Number(i),
          committedOffset: o,
          committedLeaderEpoch: 3,
          committedMetadata: 'meta',
        })),
      },
    ],
  }
}

const commitTxn = (t: Context, producerId: bigint, epoch: number, offsets: Record<number, bigint>) =>
  t.write('txn-commit-offset', (m, nowMs) =>
    m.commitTransactionalOffset({ ...CTX, nowMs }, txn(producerId, epoch, offsets)),
  )

/** A non-transactional commit of one partition of foo (no topic id unless given). */
const plain = (t: Context, partition: number, offset: bigint, topicId = '') =>
  t.write('commit', (m, nowMs) =>
    m.commitOffset(
      { ...CTX, apiVersion: 9, maxMetadataSize: 4096, nowMs },
      {
        groupId: 'g',
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [
          {
            name: 'foo',
            topicId,
            partitions: [
              {
                partitionIndex: partition,
                committedOffset: offset,
                committedLeaderEpoch: -1,
                committedMetadata: '',
              },
            ],
          },
        ],
      },
    ),
  )

const marker = (t: Context, producerId: bigint, epoch: number, committed: boolean) =>
  t.write('write-txn-markers', (m) => m.completeTransaction(producerId, epoch, committed))

/** [errorCode, offset] of partitions 0 and 1, with and without RequireStable. */
async function view(t: Context) {
  const fetch = (requireStable: boolean) =>
    t.read('fetch', (m) =>
      m.fetchOffsets({
        groupId: 'g',
        memberId: null,
        memberEpoch: -1,
        topics: [{ name: 'foo', partitionIndexes: [0, 1] }],
        requireStable,
      }),
    )
  const shape = async (requireStable: boolean) =>
    (await fetch(requireStable)).topics[0].partitions.map((p) => [p.errorCode, p.committedOffset])
  return { stable: await shape(true), plain: await shape(false) }
}

/** Reloads the store into a fresh shard and compares what both answer. */
async function assertReplays(t: Context): Promise<void> {
  const again = await t.reload()
  assert.deepEqual(await view(again), await view(t))
  assert.deepEqual(again.shard.allOffsets('g'), t.shard.allOffsets('g'))
  assert.equal(again.shard.hasPendingOffsets('g'), t.shard.hasPendingOffsets('g'))
  await again.close()
}

describe('pending transactional offsets', () => {
  it("leave with a deleted topic, committed and pending alike, when the topic id is the deleted one's", async () => {
    const t = await start()
    await plain(t, 1, 4n, TOPIC_ID)
    await commitTxn(t, 7n, 2, { 0: 5n })
    // Another topic of the same name (created again): nothing of foo's is its.
    const other = await t.write('deleted', (m) => ({
      records: m.onTopicsDeleted([{ name: 'foo', topicId: 'AAAAAAAAAAAAAAAAAAAAAg' }]),
      response: undefined,
    }))
    assert.equal(other, undefined)
    assert.equal(t.shard.hasPendingOffsets('g'), true)
    assert.equal(t.shard.allOffsets('g').length, 1)
    const records = t.shard.onTopicsDeleted([{ name: 'foo', topicId: TOPIC_ID }])
    assert.deepEqual(records, [
      { type: 'OffsetCommit', key: { group: 'g', topic: 'foo', partition: 1 }, value: null },
      {
        type: 'TxnOffsetCommit',
        key: { producerId: 7n, group: 'g', topic: 'foo', partition: 0 },
        value: null,
      },
    ])
    await t.write('deleted', () => ({ records, response: undefined }))
    assert.equal(t.shard.hasPendingOffsets('g'), false)
    assert.deepEqual(t.shard.allOffsets('g'), [])
    await assertReplays(t)
    await t.close()
  })

  it('are written as TxnOffsetCommit records of the producer, invisible without RequireStable', async () => {
    const t = await start()
    const answer = await commitTxn(t, 7n, 2, { 0: 5n })
    assert.deepEqual(answer, [
      { name: 'foo', topicId: TOPIC_ID, partitions: [{ partitionIndex: 0, errorCode: 0 }] },
    ])
    assert.deepEqual(await t.log(), [
      {
        type: 'TxnOffsetCommit',
        key: { producerId: 7n, group: 'g', topic: 'foo', partition: 0 },
        value: {
          producerEpoch: 2,
          offset: 5n,
          leaderEpoch: 3,
          metadata: 'meta',
          commitTimestamp: BigInt(t.nowMs),
          topicId: TOPIC_ID,
        },
        valueVersion: 0,
      },
    ])
    assert.deepEqual(await view(t), {
      stable: [
        [ErrorCode.UNSTABLE_OFFSET_COMMIT, -1n],
        [0, -1n],
      ],
      plain: [
        [0, -1n],
        [0, -1n],
      ],
    })
    await assertReplays(t)
    await t.close()
  })

  it('metadata above the limit is refused per partition; a group error refuses all', async () => {
    const t = await start()
    const big = txn(7n, 0, { 0: 1n, 1: 2n })
    const topics = [
      {
        ...big.topics[0],
        partitions: [
          big.topics[0].partitions[0],
          { ...big.topics[0].partitions[1], committedMetadata: 'x'.repeat(11) },
        ],
      },
    ]
    const answer = await t.write('txn-commit-offset', (m, nowMs) =>
      m.commitTransactionalOffset({ ...CTX, nowMs }, { ...big, topics }),
    )
    assert.deepEqual(
      answer[0].partitions.map((p) => p.errorCode),
      [0, ErrorCode.OFFSET_METADATA_TOO_LARGE],
    )
    const refusing = await ShardTestContext.start({
      newShard: () =>
        new OffsetMetadataManager({
          ...ANY_GROUP,
          validateTransactionalOffsetCommit: () => ErrorCode.ILLEGAL_GENERATION,
        }),
    })
    const refused = await refusing.write('txn-commit-offset', (m, nowMs) =>
      m.commitTransactionalOffset({ ...CTX, nowMs }, txn(7n, 0, { 0: 1n })),
    )
    assert.deepEqual(refused[0].partitions[0].errorCode, ErrorCode.ILLEGAL_GENERATION)
    assert.deepEqual(await refusing.log(), [])
    await refusing.close()
    await t.close()
  })

  it('COMMIT writes OffsetCommit records and pending tombstones; a repeated marker writes nothing', async () => {
    const t = await start()
    await commitTxn(t, 7n, 2, { 0: 5n, 1: 6n })
    const before = (await t.log()).length
    const done = await marker(t, 7n, 3, true)
    assert.deepEqual(done, { errorCode: 0, committed: 2, dropped: 0 })
    const written = (await t.log()).slice(before)
    assert.deepEqual(
      written.map((r) => [r.type, r.key.partition, r.value === null ? null : r.value.offset]),
      [
        ['OffsetCommit', 0, 5n],
        ['OffsetCommit', 1, 6n],
        ['TxnOffsetCommit', 0, null],
        ['TxnOffsetCommit', 1, null],
      ],
    )
    assert.equal(written[0].valueVersion, 4, 'with the topic id')
    assert.deepEqual((await view(t)).stable, [
      [0, 5n],
      [0, 6n],
    ])
    await assertReplays(t)
    const count = (await t.log()).length
    assert.deepEqual(await marker(t, 7n, 3, true), { errorCode: 0, committed: 0, dropped: 0 })
    assert.equal((await t.log()).length, count)
    await t.close()
  })

  it('ABORT drops them; a stale marker is refused and changes nothing', async () => {
    const t = await start()
    await commitTxn(t, 7n, 0, { 0: 5n })
    await marker(t, 7n, 0, true)
    await commitTxn(t, 7n, 4, { 0: 50n })
    const count = (await t.log()).length
    assert.deepEqual(await marker(t, 7n, 3, false), {
      errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
      committed: 0,
      dropped: 0,
    })
    assert.equal((await t.log()).length, count)
    assert.deepEqual(await marker(t, 7n, 4, false), { errorCode: 0, committed: 0, dropped: 1 })
    assert.deepEqual((await view(t)).stable[0], [0, 5n])
    await assertReplays(t)
    // Compaction keeps the latest record of every key: the aborted offset does not come back.
    await t.store.compact(0)
    await assertReplays(t)
    await t.close()
  })

  it('a non-transactional commit written after the pending offset wins; one written before loses', async () => {
    const t = await start()
    await plain(t, 1, 100n)
    await commitTxn(t, 9n, 0, { 0: 10n, 1: 11n })
    await plain(t, 0, 99n)
    assert.deepEqual(await marker(t, 9n, 0, true), { errorCode: 0, committed: 1, dropped: 1 })
    assert.deepEqual((await view(t)).stable, [
      [0, 99n],
      [0, 11n],
    ])
    await assertReplays(t)
    await t.close()
  })

  it('two producers: each marker settles only its own offsets', async () => {
    const t = await start()
    await commitTxn(t, 1n, 0, { 0: 1n })
    await commitTxn(t, 2n, 0, { 0: 2n, 1: 2n })
    await marker(t, 1n, 0, true)
    assert.deepEqual((await view(t)).stable, [
      [ErrorCode.UNSTABLE_OFFSET_COMMIT, -1n],
      [ErrorCode.UNSTABLE_OFFSET_COMMIT, -1n],
    ])
    assert.deepEqual((await view(t)).plain[0], [0, 1n])
    await assertReplays(t)
    await marker(t, 2n, 0, false)
    assert.deepEqual((await view(t)).stable, [
      [0, 1n],
      [0, -1n],
    ])
    await assertReplays(t)
    await t.close()
  })

  it('dropPendingOffsets removes one epoch of one producer in one group, nothing else', async () => {
    const t = await start()
    await commitTxn(t, 1n, 3, { 0: 1n })
    await commitTxn(t, 2n, 3, { 1: 2n })
    const dropped = await t.write('txn-drop-pending-offsets', (m) => m.dropPendingOffsets('g', 1n, 2))
    assert.equal(dropped, 0, 'another epoch is left alone')
    assert.equal(await t.write('txn-drop-pending-offsets', (m) => m.dropPendingOffsets('other', 1n, 3)), 0)
    assert.equal(await t.write('txn-drop-pending-offsets', (m) => m.dropPendingOffsets('g', 1n, 3)), 1)
    assert.deepEqual((await view(t)).stable, [
      [0, -1n],
      [ErrorCode.UNSTABLE_OFFSET_COMMIT, -1n],
    ])
    await assertReplays(t)
    await t.close()
  })

  it('pending offsets do not expire and keep their group; OffsetDelete and group deletion drop them', async () => {
    const t = await start()
    await commitTxn(t, 1n, 0, { 0: 1n })
    const sweep = t.shard.expiredOffsetsRecords('g', t.nowMs + 10_000, 1, () => false)
    assert.deepEqual([sweep.records.length, sweep.allOffsetsExpired], [0, false])
    assert.deepEqual(
      t.shard.deleteAllOffsetsRecords('g').map((r) => [r.type, r.value]),
      [['TxnOffsetCommit', null]],
    )
    await t.write('delete', (m) =>
      m.deleteOffsets({ groupId: 'g', topics: [{ name: 'foo', partitions: [0] }] }),
    )
    assert.equal(t.shard.hasPendingOffsets('g'), false)
    assert.deepEqual(await marker(t, 1n, 0, true), { errorCode: 0, committed: 0, dropped: 0 })
    assert.deepEqual((await view(t)).stable[0], [0, -1n])
    await assertReplays(t)
    await t.close()
  })
})
