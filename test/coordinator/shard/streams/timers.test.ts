import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { STREAMS_GROUP_CONFIG_DEFAULTS } from '../../../../src/coordinator/shard/streams/index.js'
import { Harness, heartbeatRequest, joinRequest, topicsImage } from './harness.js'

describe('timer bookkeeping follows what the runtime armed', () => {
  it('a join whose append failed leaves no phantom initial-rebalance timer: the retry schedules it', () => {
    const h = new Harness(topicsImage({ foo: 2 }))
    const failed = h.failedHeartbeat(joinRequest())
    assert.deepEqual(
      failed.timers.schedule.map((t) => t.key),
      ['initial-rebalance-timeout-g', 'session-timeout-g-m1'],
    )
    // Nothing was appended, so nothing was armed.
    assert.equal(h.manager.isTimerScheduled('initial-rebalance-timeout-g'), false)
    assert.equal(h.manager.group('g'), undefined)

    const retry = h.heartbeat(joinRequest())
    assert.deepEqual(
      retry.timers.schedule.map((t) => [t.key, t.delayMs]),
      [
        ['initial-rebalance-timeout-g', 3000],
        ['session-timeout-g-m1', 45000],
      ],
    )
    assert.equal(h.manager.isTimerScheduled('initial-rebalance-timeout-g'), true)
    assert.deepEqual(
      retry.response.status?.map((s) => s.statusCode),
      [5],
    )
    // The delay passes and the member gets its tasks.
    h.advance(3000)
    assert.equal(h.manager.isTimerScheduled('initial-rebalance-timeout-g'), false)
    const r = h.heartbeat(heartbeatRequest({ memberEpoch: 1, endpointInformationEpoch: 0 }))
    assert.deepEqual(r.response.activeTasks, [{ subtopologyId: '0', partitions: [0, 1] }])
    assert.deepEqual(r.response.status, [])
    h.assertReplayEquivalent()
  })

  it('a timer cancelled by the runtime is no longer seen as pending; the delay is not reported', () => {
    const h = new Harness(topicsImage({ foo: 2 }))
    h.heartbeat(joinRequest())
    assert.equal(h.manager.isTimerScheduled('initial-rebalance-timeout-g'), true)
    // The runtime dropped the timer (e.g. the shard was reloaded): the manager follows it.
    h.timers.delete('initial-rebalance-timeout-g')
    assert.equal(h.manager.isTimerScheduled('initial-rebalance-timeout-g'), false)
    const r = h.heartbeat(heartbeatRequest({ memberEpoch: 1, endpointInformationEpoch: 0 }))
    assert.deepEqual(r.response.status, [])
    assert.deepEqual(r.response.activeTasks, [{ subtopologyId: '0', partitions: [0, 1] }])
    h.assertReplayEquivalent()
  })

  it('session and rebalance timer keys are reported pending only while armed', () => {
    const h = new Harness(topicsImage({ foo: 2 }))
    const cfg = { ...STREAMS_GROUP_CONFIG_DEFAULTS, initialRebalanceDelayMs: 0 }
    h.failedHeartbeat(joinRequest(), cfg)
    assert.equal(h.manager.isTimerScheduled('session-timeout-g-m1'), false)
    h.heartbeat(joinRequest(), cfg)
    assert.equal(h.manager.isTimerScheduled('session-timeout-g-m1'), true)
    h.heartbeat(heartbeatRequest({ memberEpoch: -1 }), cfg)
    assert.equal(h.manager.isTimerScheduled('session-timeout-g-m1'), false)
  })

  it('a steady heartbeat hands the runtime the same session-timeout operation; a rejoin gets a new one', () => {
    const h = new Harness(topicsImage({ foo: 2 }))
    const cfg = { ...STREAMS_GROUP_CONFIG_DEFAULTS, initialRebalanceDelayMs: 0 }
    const sessionOp = (r: ReturnType<Harness['heartbeat']>) =>
      r.timers.schedule.find((t) => t.key === 'session-timeout-g-m1')?.op
    const join = sessionOp(h.heartbeat(joinRequest(), cfg))
    // Ids decoded from each request are fresh strings: the operation must not capture them.
    const steady1 = sessionOp(h.heartbeat(heartbeatRequest({ memberId: `m${'1'}`, memberEpoch: 2 }), cfg))
    const steady2 = sessionOp(h.heartbeat(heartbeatRequest({ memberId: `m${'1'}`, memberEpoch: 2 }), cfg))
    // The join's member is stored only when its records are replayed, so the first operation kept
    // is the one of the first heartbeat after the join.
    assert.ok(join !== undefined && steady1 !== undefined)
    assert.equal(steady2, steady1)
    // The operation still fences the member when its session expires.
    h.advance(STREAMS_GROUP_CONFIG_DEFAULTS.sessionTimeoutMs)
    assert.equal(h.manager.group('g')?.members.has('m1') ?? false, false)
    const rejoin = sessionOp(h.heartbeat(joinRequest(), cfg))
    assert.ok(rejoin !== undefined)
    assert.notEqual(rejoin, steady1)
    h.assertReplayEquivalent()
  })
})
