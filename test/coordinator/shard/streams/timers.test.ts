import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { STREAMS_GROUP_CONFIG_DEFAULTS } from '../../../../src/coordinator/shard/streams/index.js'
import type {
  StreamsGroupConfig,
  StreamsGroupHeartbeatRequest,
} from '../../../../src/coordinator/shard/streams/index.js'
import { Harness, heartbeatRequest, joinRequest, newManager, topicsImage } from './harness.js'

describe('timer bookkeeping follows what the runtime armed', () => {
  it('a join whose append failed leaves no phantom initial-rebalance timer: the retry schedules it', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const failed = await h.failedHeartbeat(joinRequest())
    assert.deepEqual(
      failed.timers.schedule!.map((t) => t.key),
      ['initial-rebalance-timeout-g', 'session-timeout-g-m1'],
    )
    // Nothing was appended, so nothing was armed.
    assert.equal(h.manager.isTimerScheduled('initial-rebalance-timeout-g'), false)
    assert.equal(h.manager.group('g'), undefined)

    const retry = await h.heartbeat(joinRequest())
    assert.deepEqual(
      retry.timers.schedule!.map((t) => [t.key, t.delayMs]),
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
    await h.advance(3000)
    assert.equal(h.manager.isTimerScheduled('initial-rebalance-timeout-g'), false)
    const r = await h.heartbeat(heartbeatRequest({ memberEpoch: 1, endpointInformationEpoch: 0 }))
    assert.deepEqual(r.response.activeTasks, [{ subtopologyId: '0', partitions: [0, 1] }])
    assert.deepEqual(r.response.status, [])
    await h.assertReplayEquivalent()
  })

  it('a timer cancelled by the runtime is no longer seen as pending; the delay is not reported', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    await h.heartbeat(joinRequest())
    assert.equal(h.manager.isTimerScheduled('initial-rebalance-timeout-g'), true)
    // The runtime dropped the timer (e.g. the shard was reloaded): the manager follows it.
    h.dropTimer('initial-rebalance-timeout-g')
    assert.equal(h.manager.isTimerScheduled('initial-rebalance-timeout-g'), false)
    const r = await h.heartbeat(heartbeatRequest({ memberEpoch: 1, endpointInformationEpoch: 0 }))
    assert.deepEqual(r.response.status, [])
    assert.deepEqual(r.response.activeTasks, [{ subtopologyId: '0', partitions: [0, 1] }])
    await h.assertReplayEquivalent()
  })

  it('session and rebalance timer keys are reported pending only while armed', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const cfg = { ...STREAMS_GROUP_CONFIG_DEFAULTS, initialRebalanceDelayMs: 0 }
    await h.failedHeartbeat(joinRequest(), cfg)
    assert.equal(h.manager.isTimerScheduled('session-timeout-g-m1'), false)
    await h.heartbeat(joinRequest(), cfg)
    assert.equal(h.manager.isTimerScheduled('session-timeout-g-m1'), true)
    await h.heartbeat(heartbeatRequest({ memberEpoch: -1 }), cfg)
    assert.equal(h.manager.isTimerScheduled('session-timeout-g-m1'), false)
  })

  it('a steady heartbeat asks for no timer while the session timer is armed: it moves the deadline, and the timer re-arms itself for the rest', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const cfg = { ...STREAMS_GROUP_CONFIG_DEFAULTS, initialRebalanceDelayMs: 0 }
    const key = 'session-timeout-g-m1'
    const steady = await steadyAfterJoin(h, cfg)
    const slot = h.manager.group('g')!.slot('m1')!
    assert.equal(slot.armed, true, 'the runtime armed the timer the stored member watches')
    await h.advance(10_000)
    const r = await h.heartbeat(steady, cfg)
    assert.deepEqual(r.records, [])
    assert.deepEqual(r.timers, { schedule: [], cancel: [] }, 'no timer asked for')
    assert.equal(h.dueMs(key), 45_000, 'the armed timer keeps its deadline')
    assert.equal(slot.deadlineMs, 55_000)
    // At 45 s the timer fires, finds the later deadline and re-arms for the rest.
    assert.deepEqual(await h.advance(35_000), [])
    assert.equal(h.manager.group('g')!.members.has('m1'), true)
    assert.equal(h.dueMs(key), 55_000)
    assert.equal(slot.armed, true)
    // Silent since 10 s: fenced at 55 s, one session timeout after its last heartbeat.
    assert.deepEqual(await h.advance(9_999), [])
    assert.ok((await h.advance(1)).length > 0)
    assert.equal(h.manager.group('g')!.members.has('m1'), false)
    assert.equal(slot.armed, false)
    await h.assertReplayEquivalent()
  })

  it('a heartbeat that writes records schedules its session timer; one whose append failed does not extend the session', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const cfg = { ...STREAMS_GROUP_CONFIG_DEFAULTS, initialRebalanceDelayMs: 0 }
    const key = 'session-timeout-g-m1'
    const steady = await steadyAfterJoin(h, cfg)
    await h.advance(10_000)
    await h.heartbeat(steady, cfg) // deadline 55 s, in soft state
    await h.advance(10_000)
    // A new rack writes member metadata: the session timer is asked for, but the append fails.
    const failed = await h.failedHeartbeat({ ...steady, rackId: 'rack-2' }, cfg)
    assert.ok(failed.records.length > 0)
    assert.deepEqual(
      failed.timers.schedule!.map((t) => [t.key, t.delayMs]),
      [[key, 45_000]],
    )
    await h.advance(34_999) // 54.999 s: the timer (45 s) re-armed for the soft deadline
    assert.equal(h.manager.group('g')!.members.has('m1'), true)
    await h.advance(1) // 55 s
    assert.equal(h.manager.group('g')!.members.has('m1'), false, 'fenced at the last successful deadline')
    await h.assertReplayEquivalent()

    // The same with the append succeeding: the new deadline (20 s + 45 s) wins over the soft one.
    const h2 = await Harness.start(topicsImage({ foo: 2 }))
    const steady2 = await steadyAfterJoin(h2, cfg)
    await h2.advance(10_000)
    await h2.heartbeat(steady2, cfg)
    await h2.advance(10_000)
    const moved = await h2.heartbeat({ ...steady2, rackId: 'rack-2' }, cfg)
    assert.ok(moved.records.length > 0)
    assert.equal(h2.dueMs(key), 65_000)
    await h2.advance(44_999) // 64.999 s
    assert.equal(h2.manager.group('g')!.members.has('m1'), true)
    await h2.advance(1)
    assert.equal(h2.manager.group('g')!.members.has('m1'), false)
    await h2.assertReplayEquivalent()
  })

  it('a shorter session timeout re-arms the timer, even after a heartbeat whose append failed', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const long = { ...STREAMS_GROUP_CONFIG_DEFAULTS, initialRebalanceDelayMs: 0 }
    const short = { ...long, sessionTimeoutMs: 10_000 }
    const key = 'session-timeout-g-m1'
    const steady = await steadyAfterJoin(h, long)
    assert.equal(h.dueMs(key), 45_000)
    await h.advance(5_000)
    // Asks for the timer at 15 s, but its append fails: the timer stays at 45 s.
    const failed = await h.failedHeartbeat({ ...steady, rackId: 'rack-2' }, short)
    assert.deepEqual(
      failed.timers.schedule!.map((t) => [t.key, t.delayMs]),
      [[key, 10_000]],
    )
    assert.equal(h.manager.group('g')!.slot('m1')!.dueMs, 45_000)
    await h.advance(1_000)
    // A steady heartbeat whose deadline (16 s) is before the armed timer's asks for the timer.
    const r = await h.heartbeat(steady, short)
    assert.deepEqual(
      r.timers.schedule!.map((t) => [t.key, t.delayMs]),
      [[key, 10_000]],
    )
    assert.equal(h.dueMs(key), 16_000)
    await h.advance(9_999)
    assert.equal(h.manager.group('g')!.members.has('m1'), true)
    await h.advance(1)
    assert.equal(h.manager.group('g')!.members.has('m1'), false, 'fenced 10 s after its last heartbeat')
    await h.assertReplayEquivalent()
  })

  it('a session timer the runtime dropped is scheduled again by the next steady heartbeat, its operation made from the stored member id', async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const cfg = { ...STREAMS_GROUP_CONFIG_DEFAULTS, initialRebalanceDelayMs: 0 }
    const key = 'session-timeout-g-m1'
    // Ids decoded from each request are fresh strings: the operation must not capture them.
    const steady = { ...(await steadyAfterJoin(h, cfg)), memberId: `m${'1'}` }
    h.dropTimer(key)
    assert.equal(h.manager.group('g')!.slot('m1')!.armed, false)
    await h.advance(1_000)
    const again = await h.heartbeat(steady, cfg)
    assert.deepEqual(
      again.timers.schedule!.map((t) => [t.key, t.delayMs]),
      [[key, 45_000]],
    )
    assert.deepEqual((await h.heartbeat(steady, cfg)).timers.schedule, [], 'armed again: nothing asked for')
    await h.advance(45_000)
    // The re-armed operation fenced the member.
    assert.equal(h.manager.group('g')!.members.has('m1'), false)
    const rejoin = await h.heartbeat(joinRequest(), cfg)
    assert.ok(rejoin.timers.schedule!.some((t) => t.key === key))
    await h.assertReplayEquivalent()
  })

  it("loading arms every member's session timer with the stored member as its watch", async () => {
    const h = await Harness.start(topicsImage({ foo: 2 }))
    const cfg = { ...STREAMS_GROUP_CONFIG_DEFAULTS, initialRebalanceDelayMs: 0 }
    await steadyAfterJoin(h, cfg)
    const loaded = newManager(h.image)
    for (const r of await h.records()) loaded.replay(r)
    const intents = loaded.onLoaded(cfg)
    const slot = loaded.group('g')!.slot('m1')!
    assert.deepEqual(
      intents.schedule!.map((t) => [t.key, t.delayMs, t.watch === slot]),
      [['session-timeout-g-m1', 45_000, true]],
    )
  })
})

/** Joins m1 at time 0 and heartbeats until a heartbeat writes nothing; returns that steady request. */
async function steadyAfterJoin(h: Harness, cfg: StreamsGroupConfig): Promise<StreamsGroupHeartbeatRequest> {
  const joined = await h.heartbeat(joinRequest(), cfg)
  let steady = heartbeatRequest({
    memberEpoch: joined.response.memberEpoch,
    endpointInformationEpoch: joined.response.endpointInformationEpoch,
    activeTasks: null,
    standbyTasks: null,
    warmupTasks: null,
  })
  for (let i = 0; i < 5; i++) {
    const r = await h.heartbeat(steady, cfg)
    steady = { ...steady, memberEpoch: r.response.memberEpoch }
    if (r.records.length === 0 && r.timers.schedule!.length === 0) return steady
  }
  throw new Error('m1 did not become steady')
}
