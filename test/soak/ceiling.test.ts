// The soak's ceiling (tools/soak/ceiling.ts): its one answer is a valid StreamsGroupHeartbeat v1
// response a steady member accepts, and its members are shared out over the load threads.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeResponse } from '../../src/protocol/frames.js'
import { CEILING_MEMBER_EPOCH, ceilingAnswer, splitCeiling } from '../../tools/soak/ceiling.js'

test('ceilingAnswer: a complete StreamsGroupHeartbeat v1 frame, no error, the interval given', () => {
  const frame = ceilingAnswer(5000)
  assert.equal(frame.readInt32BE(0), frame.length - 4)
  const r = decodeResponse(88, 1, frame.subarray(4))
  assert.equal(r.correlationId, 0)
  assert.equal(r.body.errorCode, 0)
  assert.equal(r.body.memberEpoch, CEILING_MEMBER_EPOCH)
  assert.equal(r.body.heartbeatIntervalMs, 5000)
  // Nothing for a member to act on: no new assignment, no description to push.
  assert.equal(r.body.activeTasks, null)
  assert.equal(r.body.standbyTasks, null)
  assert.equal(r.body.warmupTasks, null)
  assert.equal(r.body.topologyDescriptionRequired, false)
  assert.equal(decodeResponse(88, 1, ceilingAnswer(500).subarray(4)).body.heartbeatIntervalMs, 500)
})

test('splitCeiling: every member on a thread, the first threads one more', () => {
  assert.deepEqual(splitCeiling(2000, 4), [500, 500, 500, 500])
  assert.deepEqual(splitCeiling(10, 4), [3, 3, 2, 2])
  assert.deepEqual(splitCeiling(0, 3), [0, 0, 0])
  assert.deepEqual(splitCeiling(7, 1), [7])
})
