// The KIP-1331 shard operations: the −2 barrier (single and batch), set-stored / set-failed,
// finalize after delete, the D2 conditional write, the pre-delete and cleanup predicates, the
// heartbeat gate inputs, replay of the records into a fresh shard, and the D3 removal hook.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { GroupCoordinatorShard, type GroupCoordinatorResult } from '../../../src/coordinator/shard/index.js'
import { StickyTaskAssignor } from '../../../src/coordinator/shard/streams/assignor/index.js'
import {
  finalizeStoredTopologyEpochAfterDeleteBatch,
  heartbeatGateInputs,
  listStreamsGroupsNeedingTopologyCleanup,
  markTopologyUncertain,
  markTopologyUncertainAfterLostDescription,
  markTopologyUncertainBatch,
  setFailedTopologyEpoch,
  setStoredTopologyEpoch,
  streamsGroupsWithStoredTopologyDescription,
  validateTopologyDescriptionUpdate,
} from '../../../src/coordinator/shard/topology-description.js'
import type { CoordinatorRecord } from '../../../src/protocol/generated/coordinator-records.js'
import { decodeCoordinatorRecord, encodeCoordinatorRecord } from '../../../src/protocol/records.js'
import { joinRequest, NO_DELAY, topicsImage } from './streams/harness.js'

const assignors = { select: () => new StickyTaskAssignor() }

function newShard(removed: string[] = []): GroupCoordinatorShard {
  return new GroupCoordinatorShard({
    topics: topicsImage({ foo: 2 }),
    assignors,
    onStreamsGroupRemoved: (g) => removed.push(g),
  })
}

function apply<T>(shard: GroupCoordinatorShard, log: CoordinatorRecord[], r: GroupCoordinatorResult<T>): T {
  for (const rec of r.records) {
    const enc = encodeCoordinatorRecord(rec)
    const dec = decodeCoordinatorRecord(enc.key, enc.value)
    log.push(dec)
    shard.replay(dec)
  }
  return r.response
}

/** A group `g` with member m1 (joined), and optionally emptied. */
function setup(options: { empty?: boolean; groupId?: string } = {}) {
  const shard = newShard()
  const log: CoordinatorRecord[] = []
  const groupId = options.groupId ?? 'g'
  const join = shard.streamsGroupHeartbeat(
    { nowMs: 0, requestApiVersion: 1, clientId: 'c', clientHost: '/127.0.0.1', config: NO_DELAY },
    joinRequest({ groupId }),
  )
  apply(shard, log, join)
  if (options.empty) {
    const leave = shard.streamsGroupHeartbeat(
      { nowMs: 1, requestApiVersion: 1, clientId: 'c', clientHost: '/127.0.0.1', config: NO_DELAY },
      joinRequest({ groupId, memberEpoch: -1, topology: null }),
    )
    apply(shard, log, leave)
  }
  const epochs = () => {
    const g = shard.streams.group(groupId)
    return g === undefined ? undefined : [g.storedDescriptionTopologyEpoch, g.failedDescriptionTopologyEpoch]
  }
  return { shard, log, epochs, groupId }
}

describe('KIP-1331 shard operations', () => {
  it('the push barrier writes -2 once, copies the other fields, and is refused for a missing group', () => {
    const { shard, log, epochs } = setup()
    const epochBefore = shard.streams.group('g')!.groupEpoch
    const first = markTopologyUncertain(shard, 'g', true)
    assert.equal(first.records.length, 1)
    assert.equal(apply(shard, log, first), true)
    assert.deepEqual(epochs(), [-2, -1])
    assert.equal(shard.streams.group('g')!.groupEpoch, epochBefore)
    const again = markTopologyUncertain(shard, 'g', true)
    assert.deepEqual([again.records.length, again.response], [0, true])
    assert.deepEqual(
      [
        markTopologyUncertain(shard, 'nope', true).response,
        markTopologyUncertain(shard, 'nope', true).records,
      ],
      [false, []],
    )
  })

  it('set-stored: max(stored, pushed); a stored -1 becomes -2 (a delete raced); always one record', () => {
    const { shard, log, epochs } = setup()
    apply(shard, log, markTopologyUncertain(shard, 'g', true))
    assert.equal(apply(shard, log, setStoredTopologyEpoch(shard, 'g', 0)), null)
    assert.deepEqual(epochs(), [0, -1])
    apply(shard, log, setStoredTopologyEpoch(shard, 'g', 0))
    assert.deepEqual(epochs(), [0, -1])
    // Finalize after a delete moves −2 → −1; the late success then records −2.
    apply(shard, log, markTopologyUncertain(shard, 'g', true))
    apply(shard, log, finalizeStoredTopologyEpochAfterDeleteBatch(shard, ['g']))
    assert.deepEqual(epochs(), [-1, -1])
    const late = setStoredTopologyEpoch(shard, 'g', 0)
    assert.equal(late.records.length, 1)
    apply(shard, log, late)
    assert.deepEqual(epochs(), [-2, -1])
    assert.deepEqual(setStoredTopologyEpoch(shard, 'x', 0).response, {
      errorCode: 69,
      errorMessage: 'Group x not found.',
    })
  })

  it('set-failed ratchets the failed epoch and leaves stored alone', () => {
    const { shard, log, epochs } = setup()
    apply(shard, log, markTopologyUncertain(shard, 'g', true))
    apply(shard, log, setFailedTopologyEpoch(shard, 'g', 0))
    assert.deepEqual(epochs(), [-2, 0])
  })

  it('finalize: -2 → -1, a real epoch → -2, -1 and missing groups → no record', () => {
    const { shard, log, epochs } = setup()
    assert.equal(finalizeStoredTopologyEpochAfterDeleteBatch(shard, ['g', 'missing']).records.length, 0)
    apply(shard, log, markTopologyUncertain(shard, 'g', true))
    apply(shard, log, setStoredTopologyEpoch(shard, 'g', 0))
    apply(shard, log, finalizeStoredTopologyEpochAfterDeleteBatch(shard, ['g']))
    assert.deepEqual(epochs(), [-2, -1])
    apply(shard, log, finalizeStoredTopologyEpochAfterDeleteBatch(shard, ['g']))
    assert.deepEqual(epochs(), [-1, -1])
  })

  it('delete-path barrier (markWhenNone=false) needs an empty group with stored != -1', () => {
    const busy = setup()
    apply(busy.shard, busy.log, markTopologyUncertain(busy.shard, 'g', true))
    apply(busy.shard, busy.log, setStoredTopologyEpoch(busy.shard, 'g', 0))
    assert.deepEqual(markTopologyUncertainBatch(busy.shard, ['g']).response, [])
    const none = setup({ empty: true })
    assert.deepEqual(markTopologyUncertainBatch(none.shard, ['g']).response, [])
    const ok = setup({ empty: true })
    apply(ok.shard, ok.log, markTopologyUncertain(ok.shard, 'g', true))
    apply(ok.shard, ok.log, setStoredTopologyEpoch(ok.shard, 'g', 0))
    const batch = markTopologyUncertainBatch(ok.shard, ['g', 'g', 'missing'])
    assert.deepEqual([batch.response, batch.records.length], [['g'], 1])
    apply(ok.shard, ok.log, batch)
    assert.deepEqual(ok.epochs(), [-2, -1])
    // Already −2: still eligible, no record.
    const again = markTopologyUncertainBatch(ok.shard, ['g'])
    assert.deepEqual([again.response, again.records.length], [['g'], 0])
  })

  it('pre-delete subset and cleanup scan: streams groups with stored != -1; the scan wants them empty and offset-free', () => {
    const { shard, log } = setup({ empty: true })
    assert.deepEqual(streamsGroupsWithStoredTopologyDescription(shard, ['g']), [])
    assert.deepEqual(listStreamsGroupsNeedingTopologyCleanup(shard).eligible, [])
    apply(shard, log, markTopologyUncertain(shard, 'g', true))
    assert.deepEqual(streamsGroupsWithStoredTopologyDescription(shard, ['g', 'other']), ['g'])
    assert.deepEqual(listStreamsGroupsNeedingTopologyCleanup(shard).eligible, ['g'])
    apply(
      shard,
      log,
      shard.commitOffsets(
        { apiVersion: 9, nowMs: 5, maxMetadataSize: 4096 },
        {
          groupId: 'g',
          generationIdOrMemberEpoch: -1,
          memberId: '',
          groupInstanceId: null,
          retentionTimeMs: -1n,
          topics: [
            {
              name: 'foo',
              topicId: '',
              partitions: [
                { partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null },
              ],
            },
          ],
        },
      ),
    )
    assert.deepEqual(listStreamsGroupsNeedingTopologyCleanup(shard).eligible, [])
  })

  it('D2 conditional write: only when stored still equals the epoch', () => {
    const { shard, log, epochs } = setup()
    apply(shard, log, markTopologyUncertain(shard, 'g', true))
    apply(shard, log, setStoredTopologyEpoch(shard, 'g', 0))
    assert.equal(markTopologyUncertainAfterLostDescription(shard, 'g', 3).records.length, 0)
    assert.equal(apply(shard, log, markTopologyUncertainAfterLostDescription(shard, 'g', 0)), true)
    assert.deepEqual(epochs(), [-2, -1])
  })

  it('validation: missing group, unknown member, epoch mismatch', () => {
    const { shard } = setup()
    assert.deepEqual(validateTopologyDescriptionUpdate(shard, 'g', 'm1', 0), null)
    assert.deepEqual(validateTopologyDescriptionUpdate(shard, 'x', 'm1', 0), {
      errorCode: 69,
      errorMessage: 'Group x not found.',
    })
    assert.deepEqual(validateTopologyDescriptionUpdate(shard, 'g', 'm9', 0), {
      errorCode: 25,
      errorMessage: 'Member m9 is not a member of group g.',
    })
    assert.deepEqual(validateTopologyDescriptionUpdate(shard, 'g', 'm1', 2), {
      errorCode: 42,
      errorMessage: "Topology epoch 2 does not match the group's current topology epoch 0.",
    })
  })

  it('gate inputs come from the records a join is about to write (new group)', () => {
    const shard = newShard()
    const join = shard.streamsGroupHeartbeat(
      { nowMs: 0, requestApiVersion: 1, clientId: 'c', clientHost: '/127.0.0.1', config: NO_DELAY },
      joinRequest({ groupId: 'fresh' }),
    )
    assert.deepEqual(heartbeatGateInputs(shard, 'fresh', join.records), {
      currentTopologyEpoch: 0,
      storedDescriptionTopologyEpoch: -1,
      failedDescriptionTopologyEpoch: -1,
    })
    assert.equal(heartbeatGateInputs(shard, 'fresh', []).currentTopologyEpoch, -1)
  })

  it('the records replay into a fresh shard to the same epochs; a tombstone calls the D3 hook', () => {
    const { shard, log, epochs } = setup({ empty: true })
    apply(shard, log, markTopologyUncertain(shard, 'g', true))
    apply(shard, log, setFailedTopologyEpoch(shard, 'g', 0))
    const removed: string[] = []
    const fresh = newShard(removed)
    for (const r of log) fresh.replay(r)
    const g = fresh.streams.group('g')!
    assert.deepEqual([g.storedDescriptionTopologyEpoch, g.failedDescriptionTopologyEpoch], epochs())
    const deleted = fresh.deleteGroups(['g'])
    for (const r of deleted.records) fresh.replay(r)
    assert.deepEqual(removed, ['g'])
  })
})
