/**
 * The end of a transaction that touched `__consumer_offsets`, cut at each point between the Prepare
 * record and the Complete record, then restarted from the same SQLite file: the group coordinator
 * and the transaction coordinator run on the real runtime over one store, and the marker for the
 * offsets partition goes to `GroupCoordinatorService.completeTransaction` as the server's
 * `PartitionMarkerWriter` sends it. After the restart the transaction coordinator's load re-sends
 * the markers, and the offsets end committed exactly once (or dropped for an abort).
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { type CoordinatorTopic, GroupCoordinatorService } from '../../../src/coordinator/service/index.js'
import {
  TransactionCoordinatorService,
  type TransactionMarkerWriter,
} from '../../../src/coordinator/service/transaction-coordinator-service.js'
import { SqliteRecordStore } from '../../../src/coordinator/storage/sqlite.js'
import type { MarkerPartitionResult, TxnMarkerIntent } from '../../../src/coordinator/txn/index.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import { GROUP_METADATA_TOPIC_NAME } from '../../../src/protocol/topics.js'
import { parseConfig } from '../../../src/server/config.js'

const OFFSETS_PARTITIONS = 3

const topics = {
  list: (): CoordinatorTopic[] => [{ name: 'in', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', numPartitions: 1 }],
  createTopics: async () => [],
}

/** Where the marker writing of the first run stops (the process "dies" there). */
type Cut = 'before-offsets' | 'after-offsets' | 'none'

/**
 * The markers as the server writes them: the data partition always succeeds, the offsets partition
 * goes to the group coordinator. `cut` holds the offsets marker forever before or after the group
 * coordinator applied it, as a crash at that moment would.
 */
class Writer implements TransactionMarkerWriter {
  offsetsCalls = 0
  constructor(
    readonly groups: GroupCoordinatorService,
    readonly cut: Cut,
  ) {}
  async writeTxnMarkers(
    marker: TxnMarkerIntent,
    list: readonly { readonly topic: string; readonly partitions: readonly number[] }[],
  ): Promise<MarkerPartitionResult[]> {
    const out: MarkerPartitionResult[] = []
    for (const t of list) {
      for (const partition of t.partitions) {
        let errorCode: number = ErrorCode.NONE
        if (t.topic === GROUP_METADATA_TOPIC_NAME) {
          this.offsetsCalls++
          if (this.cut === 'before-offsets') await new Promise(() => {})
          errorCode = await this.groups.completeTransaction(partition, marker)
          if (this.cut === 'after-offsets') await new Promise(() => {})
        }
        out.push({ topic: t.topic, partition, errorCode })
      }
    }
    return out
  }
  partitionExists(): boolean {
    return true
  }
}

class Ids {
  next = 5000n
  generateProducerId(): bigint | null {
    return this.next++
  }
}

async function startBoth(dir: string, cut: Cut) {
  const store = new SqliteRecordStore(dir)
  await store.open()
  const config = parseConfig({ 'offsets.topic.num.partitions': String(OFFSETS_PARTITIONS) })
  const groups = await GroupCoordinatorService.start({ store, config, topics })
  const writer = new Writer(groups, cut)
  const txns = await TransactionCoordinatorService.start({
    store,
    config: { transactionStateLogNumPartitions: 2, offsetsTopicNumPartitions: OFFSETS_PARTITIONS },
    producerIds: new Ids(),
    markers: writer,
    markerRetryBackoffMs: 10,
  })
  return {
    groups,
    txns,
    writer,
    /** Stops without waiting for a marker write that never ends (the crash). */
    async stop() {
      await Promise.race([txns.close(), new Promise((r) => setTimeout(r, 200))])
      await groups.close()
      await store.close()
    },
  }
}

async function committedOffset(groups: GroupCoordinatorService, requireStable: boolean) {
  const r = await groups.fetchOffsets({
    groupId: 'app',
    memberId: null,
    memberEpoch: -1,
    topics: [{ name: 'in', partitionIndexes: [0] }],
    requireStable,
  })
  const p = r.topics[0].partitions[0]
  return [p.errorCode, p.committedOffset]
}

async function state(txns: TransactionCoordinatorService): Promise<string> {
  const deadline = Date.now() + 5000
  for (;;) {
    const [d] = await txns.describeTransactions(['tx'])
    if (d.transactionState.startsWith('Complete') || Date.now() > deadline) return d.transactionState
    await new Promise((r) => setTimeout(r, 10))
  }
}

async function scenario(cut: Cut, committed: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-txn-offsets-'))
  try {
    const first = await startBoth(dir, cut)
    const init = await first.txns.initProducerId({
      transactionalId: 'tx',
      transactionTimeoutMs: 60000,
      producerId: -1n,
      producerEpoch: -1,
    })
    const base = { transactionalId: 'tx', producerId: init.producerId, producerEpoch: init.producerEpoch }
    assert.equal(
      await first.txns.addPartitionsToTxn({
        ...base,
        topics: [
          { topic: 'in', partitions: [0] },
          { topic: GROUP_METADATA_TOPIC_NAME, partitions: [first.groups.shardFor('app')] },
        ],
        clientTransactionVersion: 2,
      }),
      ErrorCode.NONE,
    )
    const answer = await first.groups.commitTransactionalOffsets(5, {
      ...base,
      groupId: 'app',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: 'in',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
          partitions: [
            { partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: -1, committedMetadata: '' },
          ],
        },
      ],
    })
    assert.equal(answer[0].partitions[0].errorCode, ErrorCode.NONE)
    const end = await first.txns.endTxn({ ...base, committed, clientTransactionVersion: 2 })
    assert.equal(end.errorCode, ErrorCode.NONE)
    if (cut === 'none') {
      assert.equal(await state(first.txns), committed ? 'CompleteCommit' : 'CompleteAbort')
    } else {
      while (first.writer.offsetsCalls === 0) await new Promise((r) => setTimeout(r, 5))
      await new Promise((r) => setTimeout(r, 50))
      const [d] = await first.txns.describeTransactions(['tx'])
      assert.equal(d.transactionState, committed ? 'PrepareCommit' : 'PrepareAbort')
      const expected =
        cut === 'after-offsets' && committed ? [0, 42n] : cut === 'after-offsets' ? [0, -1n] : [88, -1n]
      assert.deepEqual(await committedOffset(first.groups, true), expected)
    }
    await first.stop()

    const second = await startBoth(dir, 'none')
    try {
      assert.equal(await state(second.txns), committed ? 'CompleteCommit' : 'CompleteAbort')
      assert.deepEqual(await committedOffset(second.groups, true), committed ? [0, 42n] : [0, -1n])
      if (cut !== 'none') assert.ok(second.writer.offsetsCalls >= 1, 'the load re-sent the offsets marker')
    } finally {
      await second.stop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('transactional offsets across a crash between Prepare and Complete', () => {
  for (const committed of [true, false]) {
    for (const cut of ['before-offsets', 'after-offsets', 'none'] as const) {
      it(`${committed ? 'COMMIT' : 'ABORT'}, cut ${cut}`, () => scenario(cut, committed))
    }
  }
})
