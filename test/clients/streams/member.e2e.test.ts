import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import type { StreamsGroupHeartbeatRequest } from '../../../src/protocol/generated/messages/StreamsGroupHeartbeatRequest.js'
import type { StreamsGroupHeartbeatResponse } from '../../../src/protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import {
  heartbeatTopology,
  internalTopicDecorator,
  type StreamsGroupStatus,
  StreamsMember,
  type StreamsMemberOptions,
  type StreamsTasks,
  Topology,
  topologyDescriptionToWire,
} from '../../../src/clients/streams/index.js'
import type { KafkaError } from '../../../src/clients/network/index.js'
import { FakeBroker, type Received } from '../fake-broker.js'

const topology = new Topology()
  .addSource('src', 'in')
  .addProcessor('p', ['src'])
  .addSink('k', 'out', 'p')
  .addSource('src2', 'in2')
  .addProcessor('p2', ['src2'])

type Hb = Received & { request: StreamsGroupHeartbeatRequest }
type HbReply = Partial<StreamsGroupHeartbeatResponse> | 'drop' | 'close'

const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close()
})

async function waitFor(what: string, cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

const t = (...entries: Array<[string, number[]]>) =>
  entries.map(([subtopologyId, partitions]) => ({ subtopologyId, partitions }))

const ok = (epoch: number, extra: Partial<StreamsGroupHeartbeatResponse> = {}): HbReply => ({
  memberEpoch: epoch,
  heartbeatIntervalMs: 20,
  ...extra,
})

/** A fake broker whose StreamsGroupHeartbeat answers come from `reply`; records every call. */
async function setup(
  reply: (req: Hb, n: number) => HbReply,
  opts: Partial<StreamsMemberOptions> = {},
  broker?: FakeBroker,
) {
  const b = broker ?? (await FakeBroker.start())
  if (broker === undefined) open.push(b)
  let n = 0
  b.on(88, (req) => {
    const r = reply(req as Hb, n++)
    if (r === 'drop' || r === 'close') return r
    return { memberId: req.request.memberId, ...r }
  })
  const calls: string[] = []
  const logs: Array<[string, string]> = []
  const log = (level: string) => (a: object | string, m?: string) =>
    logs.push([level, typeof a === 'string' ? a : (m ?? '')])
  const errors: KafkaError[] = []
  const member = new StreamsMember({
    bootstrapServers: `127.0.0.1:${b.port}`,
    applicationId: 'app',
    topology,
    retryBackoffMs: 10,
    retryBackoffMaxMs: 40,
    logger: { info: log('INFO'), warn: log('WARN'), error: log('ERROR') },
    onTasksAssigned: (a) => {
      calls.push(`assigned ${fmt(a)}`)
    },
    onTasksRevoked: (r) => {
      calls.push(`revoked ${fmt(r)}`)
    },
    onError: (e) => errors.push(e),
    ...opts,
  })
  open.push(member)
  const hbs = () => b.requestsOf(88).map((r) => r.request as StreamsGroupHeartbeatRequest)
  return { broker: b, member, calls, logs, errors, hbs }
}

function fmt(x: StreamsTasks): string {
  const one = (l: StreamsTasks['activeTasks']) =>
    l.map((e) => `${e.subtopologyId}:${e.partitions.join(',')}`).join(' ')
  return `[${one(x.activeTasks)}|${one(x.standbyTasks)}|${one(x.warmupTasks)}]`
}

const taskLists = (r: StreamsGroupHeartbeatRequest) => [r.activeTasks, r.standbyTasks, r.warmupTasks]

describe('StreamsMember', { timeout: 20_000 }, () => {
  it('joins with epoch 0, its topology and empty task lists, then heartbeats at the broker interval', async () => {
    const s = await setup((_req, n) =>
      n === 0
        ? ok(1, { activeTasks: t(['0', [1, 0]]), standbyTasks: [], warmupTasks: t(['1', [0]]) })
        : ok(1),
    )
    await s.member.start()
    await waitFor('4 heartbeats', () => s.hbs().length >= 4)
    const [join, ack, third] = s.hbs()
    assert.ok(join && ack && third)
    assert.match(join.memberId, /^[A-Za-z0-9_-]{22}$/, 'a client-generated Kafka uuid')
    assert.equal(s.member.memberId, join.memberId)
    assert.equal(join.groupId, 'app')
    assert.equal(join.memberEpoch, 0)
    assert.deepEqual(join.topology, heartbeatTopology(topology, { applicationId: 'app' }))
    assert.equal(join.rebalanceTimeoutMs, 300_000)
    assert.deepEqual(taskLists(join), [[], [], []])
    assert.match(join.processId ?? '', /^[0-9a-f-]{36}$/)
    assert.equal(join.instanceId, null)
    assert.equal(join.endpointInformationEpoch, -1)
    assert.deepEqual(s.calls, ['assigned [0:0,1||1:0]'])
    assert.deepEqual(s.member.tasks(), {
      activeTasks: t(['0', [0, 1]]),
      standbyTasks: [],
      warmupTasks: t(['1', [0]]),
    })
    // Second heartbeat acknowledges the new owned set; after that the lists are null (unchanged).
    assert.equal(ack.memberEpoch, 1)
    assert.equal(ack.topology, null)
    assert.equal(ack.rebalanceTimeoutMs, -1)
    assert.deepEqual(taskLists(ack), [t(['0', [0, 1]]), [], t(['1', [0]])])
    assert.deepEqual(taskLists(third), [null, null, null])
    assert.equal(s.member.memberEpoch, 1)
    assert.equal(s.member.heartbeatIntervalMs, 20)
    assert.equal(s.member.heartbeatVersion, 1)
    assert.equal(s.member.state, 'STABLE')
  })

  it('joins with processId, instanceId, rackId, endpoint, client tags and the rebalance timeout given', async () => {
    const s = await setup(() => ok(1), {
      processId: 'proc-1',
      instanceId: 'i-1',
      rackId: 'r1',
      userEndpoint: { host: 'h', port: 8080 },
      clientTags: { zone: 'z1', az: 'a' },
      rebalanceTimeoutMs: 1234,
    })
    await s.member.start()
    const join = s.hbs()[0]!
    assert.deepEqual(
      [
        join.processId,
        join.instanceId,
        join.rackId,
        join.userEndpoint,
        join.clientTags,
        join.rebalanceTimeoutMs,
      ],
      [
        'proc-1',
        'i-1',
        'r1',
        { host: 'h', port: 8080 },
        [
          { key: 'az', value: 'a' },
          { key: 'zone', value: 'z1' },
        ],
        1234,
      ],
    )
    await waitFor('a regular heartbeat', () => s.hbs().length >= 2)
    const second = s.hbs()[1]!
    assert.equal(second.instanceId, 'i-1', 'a static member sends its instance id on every heartbeat')
    assert.deepEqual(
      [second.processId, second.rackId, second.userEndpoint, second.clientTags],
      [null, null, null, null],
    )
  })

  it('reconciles revoke-before-assign and acknowledges the reduced owned set', async () => {
    const s = await setup((req, n) => {
      if (n === 0) return ok(1, { activeTasks: t(['0', [0, 1]]), standbyTasks: [], warmupTasks: [] })
      // The broker drops 0:1 (pending revocation is omitted) and moves nothing else yet.
      // Once the member owns no more than {0:0}, it is bumped and gets subtopology 1.
      if (
        req.request.activeTasks !== null &&
        JSON.stringify(req.request.activeTasks) === JSON.stringify(t(['0', [0]]))
      )
        return ok(2, { activeTasks: t(['0', [0]], ['1', [1]]), standbyTasks: t(['1', [0]]), warmupTasks: [] })
      if (req.request.memberEpoch === 1 && n === 2)
        return ok(1, { activeTasks: t(['0', [0]]), standbyTasks: t(['1', [0]]), warmupTasks: [] })
      return ok(req.request.memberEpoch)
    })
    await s.member.start()
    await waitFor('epoch 2', () => s.member.memberEpoch === 2 && s.calls.length >= 4)
    assert.deepEqual(s.calls, [
      'assigned [0:0,1||]',
      'revoked [0:1||]',
      'assigned [0:0|1:0|]',
      'assigned [0:0 1:1|1:0|]',
    ])
    await waitFor('the final ack', () => s.hbs().some((r) => r.memberEpoch === 2 && r.activeTasks !== null))
    assert.deepEqual(
      s
        .hbs()
        .filter((r) => r.activeTasks !== null)
        .map((r) => [r.memberEpoch, ...taskLists(r)]),
      [
        [0, [], [], []],
        [1, t(['0', [0, 1]]), [], []],
        [1, t(['0', [0]]), t(['1', [0]]), []],
        [2, t(['0', [0]], ['1', [1]]), t(['1', [0]]), []],
      ],
    )
    assert.deepEqual(s.member.tasks().activeTasks, t(['0', [0]], ['1', [1]]))
  })

  it('an active task demoted to standby is revoked as active and assigned as standby', async () => {
    const s = await setup((_req, n) => {
      if (n === 0) return ok(1, { activeTasks: t(['0', [0]]), standbyTasks: [], warmupTasks: [] })
      if (n === 2) return ok(2, { activeTasks: [], standbyTasks: t(['0', [0]]), warmupTasks: [] })
      return ok(n < 2 ? 1 : 2)
    })
    await s.member.start()
    await waitFor('demotion', () => s.calls.length >= 3)
    assert.deepEqual(s.calls, ['assigned [0:0||]', 'revoked [0:0||]', 'assigned [|0:0|]'])
  })

  for (const [code, name] of [
    [110, 'FENCED_MEMBER_EPOCH'],
    [25, 'UNKNOWN_MEMBER_ID'],
  ] as const) {
    it(`${name}: drops every task (onTasksLost), clears the push flag and rejoins at epoch 0 with the same member id`, async () => {
      const lost: string[] = []
      let fenced = false
      const s = await setup(
        (req, n) => {
          if (n === 0)
            return ok(1, {
              activeTasks: t(['0', [0]]),
              standbyTasks: t(['1', [0]]),
              warmupTasks: [],
              topologyDescriptionRequired: true,
            })
          if (!fenced && n >= 2) {
            fenced = true
            return { errorCode: code, errorMessage: 'gone' }
          }
          return req.request.memberEpoch === 0
            ? ok(5, { activeTasks: t(['0', [1]]), standbyTasks: [], warmupTasks: [] })
            : ok(req.request.memberEpoch)
        },
        { onTasksLost: (l) => void lost.push(fmt(l)) },
      )
      // The push never gets an answer, so the flag stays set until the fencing clears it.
      s.broker.on(93, () => 'drop')
      await s.member.start()
      await waitFor('the push request', () => s.broker.requestsOf(93).length === 1)
      assert.equal(s.member.pushManager.pushRequired, true)
      await waitFor('rejoin', () => s.member.memberEpoch === 5 && s.calls.length >= 2)
      assert.equal(s.member.pushManager.pushRequired, false)
      assert.deepEqual(lost, ['[0:0|1:0|]'])
      assert.deepEqual(s.calls, ['assigned [0:0|1:0|]', 'assigned [0:1||]'])
      const hbs = s.hbs()
      const rejoin = hbs.findLast((r) => r.memberEpoch === 0)!
      assert.notEqual(rejoin, hbs[0])
      assert.equal(rejoin.memberId, hbs[0]!.memberId)
      assert.deepEqual(rejoin.topology, heartbeatTopology(topology, { applicationId: 'app' }))
      assert.deepEqual(taskLists(rejoin), [[], [], []])
      assert.ok(
        s.logs.some(
          ([l, m]) => l === 'INFO' && m.includes(`failed with ${name}: gone. Rejoining with epoch 0`),
        ),
      )
      assert.deepEqual(s.errors, [])
    })
  }

  it('without onTasksLost a fenced member reports its tasks through onTasksRevoked', async () => {
    const s = await setup((req, n) => {
      if (n === 0) return ok(1, { activeTasks: t(['0', [0]]), standbyTasks: [], warmupTasks: [] })
      if (n === 2) return { errorCode: 110 }
      return req.request.memberEpoch === 0
        ? ok(3, { activeTasks: [], standbyTasks: [], warmupTasks: [] })
        : ok(1)
    })
    await s.member.start()
    await waitFor('rejoin', () => s.member.memberEpoch === 3)
    await waitFor('callbacks', () => s.calls.length >= 3)
    assert.deepEqual(s.calls, ['assigned [0:0||]', 'revoked [0:0||]', 'assigned [||]'])
  })

  it('retries COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR after rediscovery, and COORDINATOR_LOAD_IN_PROGRESS with back-off', async () => {
    const s = await setup((_req, n) => {
      if (n === 0) return { errorCode: 15, errorMessage: 'not yet' }
      if (n === 1) return { errorCode: 16 }
      if (n === 2) return { errorCode: 14 }
      return ok(1, { activeTasks: [], standbyTasks: [], warmupTasks: [] })
    })
    await s.member.start()
    const hbs = s.hbs()
    assert.equal(hbs.length, 4)
    assert.ok(
      hbs.every((r) => r.memberEpoch === 0 && r.topology !== null),
      'each retry is a full join',
    )
    // One lookup at start, one after each coordinator error; none after the load error.
    assert.equal(s.broker.requestsOf(10).length, 3)
    assert.deepEqual(s.errors, [])
    assert.ok(s.logs.some(([, m]) => m.includes('COORDINATOR_LOAD_IN_PROGRESS')))
  })

  it('retries after a dropped connection and resends the full task lists', async () => {
    let closed = false
    const s = await setup((req, n) => {
      if (n === 0) return ok(1, { activeTasks: t(['0', [0]]), standbyTasks: [], warmupTasks: [] })
      if (!closed && n >= 3) {
        closed = true
        return 'close'
      }
      return ok(req.request.memberEpoch)
    })
    await s.member.start()
    await waitFor('heartbeats after the drop', () => closed && s.hbs().length >= 6)
    const hbs = s.hbs()
    assert.deepEqual(taskLists(hbs[2]!), [null, null, null])
    // The request after the failure carries the lists again, the one after that does not.
    assert.deepEqual(taskLists(hbs[4]!), [t(['0', [0]]), [], []])
    assert.deepEqual(taskLists(hbs[5]!), [null, null, null])
    assert.equal(s.member.memberEpoch, 1)
    assert.deepEqual(s.errors, [])
  })

  for (const [code, name] of [
    [30, 'GROUP_AUTHORIZATION_FAILED'],
    [130, 'STREAMS_INVALID_TOPOLOGY'],
    [111, 'UNRELEASED_INSTANCE_ID'],
  ] as const) {
    it(`${name} is fatal: onError, start() rejects, the loop stops`, async () => {
      const s = await setup(() => ({ errorCode: code, errorMessage: 'no' }))
      await assert.rejects(s.member.start(), (e: KafkaError) => e.errorName === name && e.message === 'no')
      assert.equal(s.errors.length, 1)
      assert.equal(s.errors[0]!.errorName, name)
      assert.equal(s.member.state, 'FATAL')
      await new Promise((r) => setTimeout(r, 100))
      assert.equal(s.hbs().length, 1)
      assert.ok(s.logs.some(([l, m]) => l === 'ERROR' && m.includes(`fatal error ${name}: no`)))
    })
  }

  it('a fatal error after joining stops the loop too', async () => {
    const s = await setup((_req, n) => (n < 2 ? ok(1) : { errorCode: 42, errorMessage: 'bad' }))
    await s.member.start()
    await waitFor('onError', () => s.errors.length === 1)
    assert.equal(s.errors[0]!.errorName, 'INVALID_REQUEST')
    const count = s.hbs().length
    await new Promise((r) => setTimeout(r, 100))
    assert.equal(s.hbs().length, count)
  })

  it('close(): revokes every task, then leaves with epoch -1', async () => {
    const s = await setup(() => ok(1, { activeTasks: t(['0', [0]]), standbyTasks: [], warmupTasks: [] }))
    await s.member.start()
    await waitFor('assignment', () => s.calls.length === 1)
    await s.member.close()
    const leave = s.hbs().at(-1)!
    assert.deepEqual([leave.memberEpoch, leave.instanceId, leave.memberId], [-1, null, s.member.memberId])
    assert.deepEqual(s.calls, ['assigned [0:0||]', 'revoked [0:0||]'])
    assert.equal(s.member.state, 'CLOSED')
    assert.equal(s.member.memberEpoch, -1)
    const count = s.hbs().length
    await new Promise((r) => setTimeout(r, 80))
    assert.equal(s.hbs().length, count, 'no heartbeat after close')
  })

  it('close() of a static member leaves with epoch -2 and its instance id', async () => {
    const s = await setup(() => ok(1), { instanceId: 'instance-a' })
    await s.member.start()
    await s.member.close()
    const leave = s.hbs().at(-1)!
    assert.deepEqual([leave.memberEpoch, leave.instanceId], [-2, 'instance-a'])
    assert.equal(s.member.memberEpoch, -2)
  })

  it('close() before joining sends no leave and rejects start()', async () => {
    const s = await setup(() => 'drop')
    const started = s.member.start()
    await waitFor('join sent', () => s.hbs().length === 1)
    await s.member.close()
    await assert.rejects(started, /closed before it joined/)
    assert.equal(s.hbs().length, 1)
  })

  it('TopologyDescriptionRequired makes the push manager send the wire description', async () => {
    const s = await setup((_req, n) => ok(1, { topologyDescriptionRequired: n === 1 }))
    s.broker.on(93, () => ({ errorCode: 0 }))
    await s.member.start()
    assert.equal(s.broker.requestsOf(93).length, 0, 'not asked by the join response')
    await waitFor('the push', () => s.broker.requestsOf(93).length === 1)
    await waitFor('the push answer', () =>
      s.logs.some(([, m]) => m === 'Topology description pushed successfully'),
    )
    const push = s.broker.requestsOf(93)[0]!.request as {
      groupId: string
      memberId: string
      topologyEpoch: number
      topologyDescription: unknown
    }
    assert.equal(push.groupId, 'app')
    assert.equal(push.memberId, s.member.memberId)
    assert.equal(push.topologyEpoch, 0)
    assert.deepEqual(
      push.topologyDescription,
      topologyDescriptionToWire(topology.describe(), internalTopicDecorator(topology, 'app')),
    )
    const texts = s.logs.map(([, m]) => m)
    assert.ok(
      texts.indexOf('Broker requested topology description push') <
        texts.indexOf('Sending topology description for group app'),
    )
    assert.equal(s.member.pushManager.pushRequired, false)
    await new Promise((r) => setTimeout(r, 80))
    assert.equal(s.broker.requestsOf(93).length, 1, 'a false flag does not ask again')
  })

  it('a push answered NOT_COORDINATOR waits for the heartbeat to rediscover the coordinator, then retries', async () => {
    const s = await setup((_req, n) => ok(1, { topologyDescriptionRequired: n === 0 }))
    let pushes = 0
    s.broker.on(93, () => (pushes++ === 0 ? { errorCode: 16, errorMessage: 'moved' } : { errorCode: 0 }))
    await s.member.start()
    await waitFor('the second push', () => s.broker.requestsOf(93).length === 2)
    await waitFor('success', () => s.logs.some(([, m]) => m === 'Topology description pushed successfully'))
    assert.ok(
      s.logs.some(
        ([, m]) =>
          m ===
          'Coordinator error NOT_COORDINATOR pushing topology description. Will rediscover and retry: moved',
      ),
    )
    // Start-up lookup, then the one the next heartbeat made after the push forgot the coordinator.
    assert.equal(s.broker.requestsOf(10).length, 2)
    const order = s.broker.received.filter((r) => r.apiKey !== 18).map((r) => r.apiKey)
    const firstPush = order.indexOf(93)
    assert.deepEqual(
      order.slice(firstPush, order.lastIndexOf(93) + 1).filter((k) => k !== 88),
      [93, 10, 93],
    )
    assert.equal(s.member.pushManager.pushRequired, false)
  })

  it('topology.description.push.enabled=false never pushes', async () => {
    const s = await setup(() => ok(1, { topologyDescriptionRequired: true }), {
      'topology.description.push.enabled': false,
    })
    s.broker.on(93, () => ({ errorCode: 0 }))
    await s.member.start()
    await waitFor('heartbeats', () => s.hbs().length >= 4)
    assert.equal(s.broker.requestsOf(93).length, 0)
    assert.equal(s.member.pushManager.pushRequired, false)
  })

  it('uses StreamsGroupHeartbeat v1 when the broker has it, v0 otherwise', async () => {
    const broker = await FakeBroker.start()
    open.push(broker)
    broker.apiVersions.set(88, { min: 0, max: 0 })
    // TopologyDescriptionRequired does not exist at v0, so a v0 broker can never ask for a push.
    const s = await setup((req) => ok(1, { topologyDescriptionRequired: req.version >= 1 }), {}, broker)
    s.broker.on(93, () => ({ errorCode: 0 }))
    await s.member.start()
    await waitFor('heartbeats', () => s.hbs().length >= 3)
    assert.deepEqual(
      s.broker.requestsOf(88).map((r) => r.version),
      s.broker.requestsOf(88).map(() => 0),
    )
    assert.equal(s.member.heartbeatVersion, 0)
    assert.equal(s.broker.requestsOf(93).length, 0)
  })

  it('surfaces statuses through a log line and a status event when they change', async () => {
    const s = await setup((_req, n) =>
      ok(1, {
        status:
          n < 2
            ? [
                { statusCode: 1, statusDetail: 'Source topics in are missing.' },
                { statusCode: 0, statusDetail: 'stale' },
              ]
            : [],
      }),
    )
    const events: Array<readonly StreamsGroupStatus[]> = []
    s.member.on('status', (st: readonly StreamsGroupStatus[]) => events.push(st))
    await s.member.start()
    await waitFor('statuses cleared', () => events.length === 2)
    assert.deepEqual(events[0], [
      { statusCode: 1, statusName: 'MISSING_SOURCE_TOPICS', statusDetail: 'Source topics in are missing.' },
      { statusCode: 0, statusName: 'STALE_TOPOLOGY', statusDetail: 'stale' },
    ])
    assert.deepEqual(events[1], [])
    const warn = s.logs.filter(
      ([l, m]) => l === 'WARN' && m.startsWith('Membership is in the following statuses'),
    )
    assert.deepEqual(warn, [
      ['WARN', 'Membership is in the following statuses: (1) Source topics in are missing., (0) stale'],
    ])
  })

  it('echoes the endpoint information epoch and keeps the endpoint map', async () => {
    const s = await setup((_req, n) =>
      ok(1, {
        endpointInformationEpoch: 7,
        partitionsByUserEndpoint:
          n === 0
            ? [
                {
                  userEndpoint: { host: 'h', port: 1 },
                  activePartitions: [{ topic: 'in', partitions: [0] }],
                  standbyPartitions: [],
                },
              ]
            : null,
      }),
    )
    await s.member.start()
    await waitFor('second heartbeat', () => s.hbs().length >= 2)
    assert.equal(s.hbs()[1]!.endpointInformationEpoch, 7)
    assert.equal(s.member.partitionsByUserEndpoint.length, 1)
    assert.equal(s.member.partitionsByUserEndpoint[0]!.userEndpoint.host, 'h')
  })
})
