import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { NetworkClient } from '../../../src/clients/network/index.js'
import {
  Topology,
  TopologyPushManager,
  topologyDescriptionToWire,
} from '../../../src/clients/streams/index.js'
import { FakeBroker } from '../fake-broker.js'

let broker: FakeBroker
let client: NetworkClient
before(async () => {
  broker = await FakeBroker.start()
  client = new NetworkClient({ bootstrapServers: `127.0.0.1:${broker.port}` })
})
after(async () => {
  await client.close()
  await broker.close()
})

const wire = topologyDescriptionToWire(
  new Topology().addSource('src', 'in').addProcessor('p', ['src']).addSink('k', 'out', 'p').describe(),
)

function setup(opts: { enabled?: boolean } = {}) {
  const logs: Array<[string, string]> = []
  const log = (level: string) => (a: object | string, b?: string) =>
    logs.push([level, typeof a === 'string' ? a : (b ?? '')])
  let now = 1000
  const events: string[] = []
  let coordinatorKnown = true
  const pm = new TopologyPushManager({
    groupId: 'app',
    wireDescription: opts.enabled === false ? null : wire,
    memberId: () => 'm1',
    topologyEpoch: () => 0,
    coordinatorKnown: () => coordinatorKnown,
    markCoordinatorUnknown: (r) => {
      events.push(`unknown:${r}`)
      coordinatorKnown = false
    },
    onDisconnect: () => events.push('disconnect'),
    send: async (req) => {
      const node = await client.findCoordinator(req.groupId)
      return client.sendTo(node, 93, req)
    },
    logger: { info: log('INFO'), warn: log('WARN') },
    now: () => now,
    random: () => 0.5,
    retryBackoffMs: 100,
    retryBackoffMaxMs: 1000,
  })
  return {
    pm,
    logs,
    events,
    advance: (ms: number) => {
      now += ms
    },
    get now() {
      return now
    },
  }
}

describe('topology push manager', () => {
  it('is idle until the broker asks; opt-out never asks', () => {
    const off = setup({ enabled: false })
    off.pm.onHeartbeatResponse(true)
    assert.equal(off.pm.pushRequired, false)
    assert.equal(off.pm.poll(), false)
    assert.deepEqual(off.logs, [])
    const on = setup()
    assert.equal(on.pm.poll(), false)
    on.pm.onHeartbeatResponse(false)
    assert.equal(on.pm.maximumTimeToWait(), Number.POSITIVE_INFINITY)
  })

  const table: Array<[number, boolean, string, string]> = [
    [0, false, 'INFO', 'Topology description pushed successfully'],
    [
      16,
      true,
      'INFO',
      'Coordinator error NOT_COORDINATOR pushing topology description. Will rediscover and retry: why',
    ],
    [
      15,
      true,
      'INFO',
      'Coordinator error COORDINATOR_NOT_AVAILABLE pushing topology description. Will rediscover and retry: why',
    ],
    [14, true, 'INFO', 'Coordinator is loading; will retry on next poll: why'],
    [
      25,
      false,
      'INFO',
      'Topology description push rejected with UNKNOWN_MEMBER_ID; heartbeat will trigger rejoin: why',
    ],
    [
      135,
      false,
      'WARN',
      'Topology description push failed with STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED: why',
    ],
    [42, false, 'WARN', 'Topology description push failed with INVALID_REQUEST: why'],
    [35, false, 'WARN', 'Topology description push failed with UNSUPPORTED_VERSION: why'],
    [69, false, 'WARN', 'Topology description push failed with GROUP_ID_NOT_FOUND: why'],
    [30, false, 'WARN', 'Topology description push failed with GROUP_AUTHORIZATION_FAILED: why'],
    [999, false, 'WARN', 'Topology description push failed with UNKNOWN_SERVER_ERROR: why'],
  ]
  for (const [code, keeps, level, text] of table) {
    it(`error ${code}: flag ${keeps ? 'kept' : 'cleared'}, ${level} "${text}"`, async () => {
      broker.on(93, () => ({ errorCode: code, errorMessage: 'why' }))
      const s = setup()
      s.pm.onHeartbeatResponse(true)
      assert.deepEqual(s.logs.at(-1), ['INFO', 'Broker requested topology description push'])
      assert.equal(s.pm.maximumTimeToWait(s.now), 0)
      assert.equal(s.pm.poll(), true)
      assert.deepEqual(s.logs.at(-1), ['INFO', 'Sending topology description for group app'])
      assert.equal(s.pm.poll(), false, 'one request in flight at most')
      await s.pm.inFlight
      assert.deepEqual(s.logs.at(-1), [level, text])
      assert.equal(s.pm.pushRequired, keeps)
      const sent = broker.requestsOf(93).at(-1)!.request as {
        groupId: string
        memberId: string
        topologyEpoch: number
      }
      assert.deepEqual([sent.groupId, sent.memberId, sent.topologyEpoch], ['app', 'm1', 0])
      if (code === 16 || code === 15) assert.deepEqual(s.events, ['unknown:why'])
      if (keeps && code === 14) {
        // onFailedAttempt: back-off of retryBackoffMs (jitter 0.5 → exactly 100) before the retry
        assert.equal(s.pm.maximumTimeToWait(s.now), 100)
        assert.equal(s.pm.poll(s.now + 99), false)
        assert.equal(s.pm.poll(s.now + 100), true)
        await s.pm.inFlight
      }
    })
  }

  it('honours ThrottleTimeMs for any error code', async () => {
    broker.on(93, () => ({ errorCode: 14, errorMessage: null, throttleTimeMs: 5000 }))
    const s = setup()
    s.pm.onHeartbeatResponse(true)
    s.pm.poll()
    await s.pm.inFlight
    assert.equal(s.pm.maximumTimeToWait(s.now), 5000)
    assert.equal(s.pm.poll(s.now + 4999), false)
    assert.equal(s.pm.poll(s.now + 5000), true)
    await s.pm.inFlight
  })

  it('a disconnect is retriable: flag kept, coordinator forgotten, WARN with retry text', async () => {
    broker.on(93, () => 'close')
    const s = setup()
    s.pm.onHeartbeatResponse(true)
    s.pm.poll()
    await s.pm.inFlight
    assert.equal(s.pm.pushRequired, true)
    assert.deepEqual(s.events, ['disconnect'])
    assert.deepEqual(s.logs.at(-1), [
      'WARN',
      'Topology description push failed with retriable exception; will retry on next poll',
    ])
  })

  it('a non-retriable exception clears the flag', async () => {
    const s = setup()
    const pm = new TopologyPushManager({
      groupId: 'app',
      wireDescription: wire,
      memberId: () => 'm1',
      topologyEpoch: () => 0,
      coordinatorKnown: () => true,
      markCoordinatorUnknown: () => undefined,
      onDisconnect: () => undefined,
      send: () => Promise.reject(new Error('boom')),
      logger: {
        warn: (a: object | string, b?: string) =>
          s.logs.push(['WARN', typeof a === 'string' ? a : (b ?? '')]),
      },
    })
    pm.onHeartbeatResponse(true)
    pm.poll()
    await pm.inFlight
    assert.equal(pm.pushRequired, false)
    assert.deepEqual(s.logs.at(-1), [
      'WARN',
      'Topology description push failed with non-retriable exception.',
    ])
  })

  it('does not send while the coordinator is unknown', () => {
    const s = setup()
    s.pm.onHeartbeatResponse(true)
    s.events.length = 0
    const pm2 = new TopologyPushManager({
      groupId: 'app',
      wireDescription: wire,
      memberId: () => '',
      topologyEpoch: () => 0,
      coordinatorKnown: () => false,
      markCoordinatorUnknown: () => undefined,
      onDisconnect: () => undefined,
      send: () => Promise.reject(new Error('unreachable')),
    })
    pm2.onHeartbeatResponse(true)
    assert.equal(pm2.poll(), false)
    assert.equal(pm2.maximumTimeToWait(), Number.POSITIVE_INFINITY)
  })
})
