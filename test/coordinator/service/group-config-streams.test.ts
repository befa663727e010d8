// Group-level configs in the streams coordinator (spec §1.2–1.3): each group's effective settings
// are read on every heartbeat and timer. The service runs on a ManualClock, so timeouts are checked
// at the exact millisecond.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ManualClock } from '../../../src/coordinator/runtime/index.js'
import {
  type CoordinatorNewTopic,
  type CoordinatorTopic,
  GroupCoordinatorService,
} from '../../../src/coordinator/service/index.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/index.js'
import type { StreamsGroupHeartbeatResponse } from '../../../src/protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import { parseConfig } from '../../../src/server/config.js'
import { heartbeatRequest, joinRequest } from '../shard/streams/harness.js'

class FakeTopics {
  readonly topics = new Map<string, CoordinatorTopic>([
    ['foo', { name: 'foo', topicId: 'id-foo', numPartitions: 2 }],
  ])
  list(): CoordinatorTopic[] {
    return [...this.topics.values()]
  }
  async createTopics(topics: readonly CoordinatorNewTopic[]) {
    return topics.map((t) => {
      this.topics.set(t.name, { name: t.name, topicId: `id-${t.name}`, numPartitions: t.numPartitions })
      return { name: t.name, error: 'NONE', message: null }
    })
  }
}

const MOCK_ASSIGNOR_CLASS = 'org.apache.kafka.coordinator.group.streams.assignor.MockAssignor'

function start(store: MemoryRecordStore, clock: ManualClock, overrides: Record<string, string> = {}) {
  const config = parseConfig({
    'offsets.topic.num.partitions': '3',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
    'group.streams.session.timeout.ms': '10000',
    'group.streams.min.session.timeout.ms': '1000',
    'group.streams.heartbeat.interval.ms': '100',
    'group.streams.min.heartbeat.interval.ms': '100',
    'group.streams.assignors': `sticky,${MOCK_ASSIGNOR_CLASS}`,
    ...overrides,
  })
  return GroupCoordinatorService.start({ store, config, topics: new FakeTopics(), clock })
}

async function open(overrides: Record<string, string> = {}) {
  const store = new MemoryRecordStore()
  await store.open()
  // Not 0: an assignment stamped at time 0 reads as "never assigned" (no interval applies).
  const clock = new ManualClock(1_000_000)
  return { store, clock, service: await start(store, clock, overrides) }
}

const hb = { apiVersion: 1, clientId: 'c', clientHost: '/127.0.0.1' }

async function setConfigs(
  service: GroupCoordinatorService,
  groupId: string,
  configs: Record<string, string>,
) {
  const [r] = await service.groupConfigs.alter(
    [{ groupId, changes: Object.entries(configs).map(([name, value]) => ({ name, op: 0, value })) }],
    false,
  )
  assert.deepEqual(r, { errorCode: 0, errorMessage: null })
}

type Tasks = { subtopologyId: string; partitions: number[] }[]

/** A streams member driven by hand: it reports what it owns, as a client does. */
class Member {
  epoch = 0
  active: Tasks = []
  standby: Tasks = []
  warmup: Tasks = []
  last: StreamsGroupHeartbeatResponse | undefined

  constructor(
    readonly service: GroupCoordinatorService,
    readonly groupId: string,
    readonly memberId: string,
    readonly processId: string,
  ) {}

  /** Joins with a one-subtopology topology reading `foo`; stateful (a changelog) when asked. */
  join(stateful = false) {
    const changelog = {
      name: `${this.groupId}-store-changelog`,
      partitions: 0,
      replicationFactor: 0,
      topicConfigs: [],
    }
    const topology = {
      epoch: 0,
      subtopologies: [
        {
          subtopologyId: '0',
          sourceTopics: ['foo'],
          sourceTopicRegex: [],
          stateChangelogTopics: stateful ? [changelog] : [],
          repartitionSinkTopics: [],
          repartitionSourceTopics: [],
          copartitionGroups: [],
        },
      ],
    }
    return this.#send(
      joinRequest({ groupId: this.groupId, memberId: this.memberId, processId: this.processId, topology }),
    )
  }

  beat() {
    return this.#send(
      heartbeatRequest({
        groupId: this.groupId,
        memberId: this.memberId,
        memberEpoch: this.epoch,
        activeTasks: this.active,
        standbyTasks: this.standby,
        warmupTasks: this.warmup,
      }),
    )
  }

  async #send(request: ReturnType<typeof joinRequest>) {
    const r = await this.service.streamsGroupHeartbeat(hb, request)
    assert.equal(r.errorCode, 0, `${this.memberId}: ${r.errorMessage}`)
    this.last = r
    this.epoch = r.memberEpoch
    if (r.activeTasks !== null) this.active = r.activeTasks
    if (r.standbyTasks !== null) this.standby = r.standbyTasks
    if (r.warmupTasks !== null) this.warmup = r.warmupTasks
    return r
  }

  count(kind: 'active' | 'standby'): number {
    return this[kind].reduce((n, t) => n + t.partitions.length, 0)
  }
}

async function converge(service: GroupCoordinatorService, group: readonly Member[]) {
  for (let i = 0; i < 20; i++) {
    for (const m of group) await m.beat()
    await settle()
    const [d] = await service.streamsGroupDescribe([group[0].groupId], false)
    if (d.groupState === 'Stable' && group.every((m) => m.epoch === d.groupEpoch)) return d
  }
  assert.fail('the group did not converge')
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r))
}

async function memberCount(service: GroupCoordinatorService, groupId: string) {
  const [d] = await service.streamsGroupDescribe([groupId], false)
  return d.members.length
}

describe('group-level configs in streams heartbeats', () => {
  it('HeartbeatIntervalMs, TaskOffsetIntervalMs and AcceptableRecoveryLag come from the group, read on every heartbeat', async () => {
    // Without the spreading, the answered interval is the group's own.
    const { service } = await open({ 'group.heartbeat.spread.enable': 'false' })
    try {
      const a = new Member(service, 'ga', 'a1', 'p1')
      const b = new Member(service, 'gb', 'b1', 'p1')
      const first = await a.join()
      await b.join()
      assert.deepEqual(
        [first.heartbeatIntervalMs, first.taskOffsetIntervalMs, first.acceptableRecoveryLag],
        [100, 60000, 10000n],
      )
      await setConfigs(service, 'ga', {
        'streams.heartbeat.interval.ms': '250',
        'streams.task.offset.interval.ms': '20000',
        'streams.acceptable.recovery.lag': '5',
      })
      const next = await a.beat()
      assert.deepEqual(
        [next.heartbeatIntervalMs, next.taskOffsetIntervalMs, next.acceptableRecoveryLag],
        [250, 20000, 5n],
      )
      const other = await b.beat()
      assert.deepEqual(
        [other.heartbeatIntervalMs, other.taskOffsetIntervalMs, other.acceptableRecoveryLag],
        [100, 60000, 10000n],
        'another group keeps the broker values',
      )
      await service.groupConfigs.alter(
        [{ groupId: 'ga', changes: [{ name: 'streams.heartbeat.interval.ms', op: 1, value: null }] }],
        false,
      )
      assert.equal((await a.beat()).heartbeatIntervalMs, 100, 'deleting the key restores the broker value')
    } finally {
      await service.close()
    }
  })

  it('a changed num.standby.replicas bumps the group epoch and standby tasks follow', async () => {
    const { service } = await open()
    try {
      const group = [new Member(service, 'g', 'm1', 'p1'), new Member(service, 'g', 'm2', 'p2')]
      // Standby replicas are only placed for stateful tasks.
      for (const m of group) await m.join(true)
      const before = await converge(service, group)
      assert.deepEqual(
        group.map((m) => [m.count('active'), m.count('standby')]),
        [
          [1, 0],
          [1, 0],
        ],
      )
      await setConfigs(service, 'g', { 'streams.num.standby.replicas': '1' })
      const after = await converge(service, group)
      assert.equal(after.groupEpoch, before.groupEpoch + 1, 'the assignment configs changed: one epoch bump')
      assert.deepEqual(
        group.map((m) => [m.count('active'), m.count('standby')]),
        [
          [1, 1],
          [1, 1],
        ],
      )
    } finally {
      await service.close()
    }
  })

  it('a group’s session timeout fences a silent member at exactly that time', async () => {
    const { service, clock } = await open()
    try {
      const a = new Member(service, 'short', 'a1', 'p1')
      const b = new Member(service, 'long', 'b1', 'p1')
      await a.join()
      await b.join()
      await setConfigs(service, 'short', { 'streams.session.timeout.ms': '2000' })
      await a.beat()
      await b.beat()
      clock.advance(1999)
      await settle()
      assert.equal(await memberCount(service, 'short'), 1)
      clock.advance(1)
      await settle()
      assert.equal(await memberCount(service, 'short'), 0, 'fenced at 2000 ms')
      assert.equal(
        await memberCount(service, 'long'),
        1,
        'the broker’s 10000 ms still holds for the other group',
      )
      clock.advance(7999)
      await settle()
      assert.equal(await memberCount(service, 'long'), 1)
      clock.advance(1)
      await settle()
      assert.equal(await memberCount(service, 'long'), 0)
    } finally {
      await service.close()
    }
  })

  it('a session timeout shortened while a steady member’s timer is armed fences at the new time', async () => {
    // A steady heartbeat writes nothing and only moves the deadline later in soft state; a deadline
    // earlier than the armed timer's (a shorter group session timeout) must re-arm the timer.
    const { service, clock } = await open()
    try {
      const a = new Member(service, 'shrink', 'a1', 'p1')
      await a.join()
      for (let i = 0; i < 3; i++) await a.beat()
      await setConfigs(service, 'shrink', { 'streams.session.timeout.ms': '2000' })
      await a.beat()
      clock.advance(1999)
      await settle()
      assert.equal(await memberCount(service, 'shrink'), 1)
      clock.advance(1)
      await settle()
      assert.equal(await memberCount(service, 'shrink'), 0, 'fenced 2000 ms after its last heartbeat')
    } finally {
      await service.close()
    }
  })

  it('after a restart, loaded members get their group’s session timeout', async () => {
    const { store, clock, service } = await open()
    const a = new Member(service, 'g', 'a1', 'p1')
    await a.join()
    await setConfigs(service, 'g', { 'streams.session.timeout.ms': '3000' })
    await service.close()
    const again = await start(store, clock)
    try {
      clock.advance(2999)
      await settle()
      assert.equal(await memberCount(again, 'g'), 1)
      clock.advance(1)
      await settle()
      assert.equal(await memberCount(again, 'g'), 0)
    } finally {
      await again.close()
    }
  })

  it('initial rebalance delay and assignment interval are the group’s', async () => {
    const { service, clock } = await open({ 'group.streams.initial.rebalance.delay.ms': '3000' })
    try {
      await setConfigs(service, 'quick', { 'streams.initial.rebalance.delay.ms': '0' })
      const quick = await new Member(service, 'quick', 'q1', 'p1').join()
      assert.deepEqual(quick.status, [])
      assert.deepEqual(quick.activeTasks, [{ subtopologyId: '0', partitions: [0, 1] }])
      const slow = await new Member(service, 'slow', 's1', 'p1').join()
      assert.deepEqual(
        slow.status?.map((s) => s.statusDetail),
        ['Assignment delayed due to the configured initial rebalance delay.'],
      )

      await setConfigs(service, 'paced', {
        'streams.initial.rebalance.delay.ms': '0',
        'streams.assignment.interval.ms': '5000',
      })
      const p1 = new Member(service, 'paced', 'p1', 'p1')
      await p1.join()
      clock.advance(10)
      const p2 = await new Member(service, 'paced', 'p2', 'p2').join()
      assert.deepEqual(
        p2.status?.map((s) => s.statusDetail),
        ['Assignment delayed due to the configured assignment interval.'],
      )
    } finally {
      await service.close()
    }
  })

  it('the initial-delay timer runs the group’s assignor as configured when it fires', async () => {
    const { service, clock } = await open()
    try {
      for (const [groupId, assignorAtFire] of [
        ['to-mock', 'mock'],
        ['stays-sticky', 'sticky'],
      ] as const) {
        await setConfigs(service, groupId, {
          'streams.initial.rebalance.delay.ms': '500',
          'streams.num.standby.replicas': '1',
        })
        const group = [
          new Member(service, groupId, `${groupId}-1`, 'p1'),
          new Member(service, groupId, `${groupId}-2`, 'p2'),
        ]
        for (const m of group) await m.join(true)
        await setConfigs(service, groupId, { 'streams.assignor.name': assignorAtFire })
        clock.advance(500)
        await settle()
        await converge(service, group)
        const standbys = group.reduce((n, m) => n + m.count('standby'), 0)
        // The mock assignor places no standby tasks; the sticky one places one per task.
        assert.equal(standbys, assignorAtFire === 'mock' ? 0 : 2, groupId)
        const [d] = await service.streamsGroupDescribe([groupId], false)
        assert.equal(d.assignorName, assignorAtFire)
      }
    } finally {
      await service.close()
    }
  })

  it('an assignor no longer registered falls back to the default; the stored name stays', async () => {
    const { store, clock, service } = await open()
    await setConfigs(service, 'g', { 'streams.assignor.name': 'mock' })
    await new Member(service, 'g', 'm1', 'p1').join()
    assert.equal((await service.streamsGroupDescribe(['g'], false))[0].assignorName, 'mock')
    await service.close()
    const again = await start(store, clock, { 'group.streams.assignors': 'sticky' })
    try {
      assert.equal((await again.streamsGroupDescribe(['g'], false))[0].assignorName, 'sticky')
      assert.equal(again.groupConfigs.overrides('g')?.get('streams.assignor.name'), 'mock')
      const m = new Member(again, 'g', 'm2', 'p2')
      assert.equal((await m.join()).errorCode, 0)
    } finally {
      await again.close()
    }
  })

  it('a group’s configs outlive the group: deleted, then created again, it finds them', async () => {
    const { service } = await open({ 'group.heartbeat.spread.enable': 'false' })
    try {
      await setConfigs(service, 'g', { 'streams.heartbeat.interval.ms': '300' })
      const m = new Member(service, 'g', 'm1', 'p1')
      await m.join()
      const left = await service.streamsGroupHeartbeat(
        hb,
        heartbeatRequest({ memberId: 'm1', memberEpoch: -1 }),
      )
      assert.equal(left.errorCode, 0)
      const [deleted] = await service.deleteGroups(['g'])
      assert.equal(deleted.errorCode, 0)
      assert.equal(service.groupConfigs.overrides('g')?.get('streams.heartbeat.interval.ms'), '300')
      assert.equal((await new Member(service, 'g', 'm2', 'p1').join()).heartbeatIntervalMs, 300)
    } finally {
      await service.close()
    }
  })
})
