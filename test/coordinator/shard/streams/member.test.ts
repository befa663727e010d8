import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  MemberProfiles,
  MemberState,
  memberValue,
  newMember,
  StoredMember,
  StoredMemberSlot,
  type StreamsGroupMember,
  withAssignment,
} from '../../../../src/coordinator/shard/streams/member.js'
import {
  EMPTY_TASK_SET,
  EMPTY_TASKS_WITH_EPOCHS,
  TaskListBuilder,
  type TasksTuple,
} from '../../../../src/coordinator/shard/streams/tasks.js'

const UUID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'

function member(
  processId: string,
  clientId: string,
  extra: Partial<StreamsGroupMember> = {},
): StreamsGroupMember {
  return {
    ...newMember('Zm9vYmFyLW1lbWJlci1pZDE'),
    memberEpoch: 3,
    previousMemberEpoch: 2,
    state: MemberState.STABLE,
    rebalanceTimeoutMs: 300_000,
    topologyEpoch: 1,
    processId,
    clientId,
    clientHost: '/10.0.0.7',
    assignedTasks: new TaskListBuilder().set('0', 1, 3).set('0', 4, 2).build(),
    ...extra,
  }
}

// Process ids and client ids of every form: Kafka Streams' (a lower-case UUID inside the client
// id), and others kept as they are.
const cases: StreamsGroupMember[] = [
  member(UUID, `order-enricher-${UUID}-StreamThread-1-consumer`),
  member(UUID, `${UUID}`),
  member(UUID, `${UUID}-${UUID}`),
  member(UUID, 'custom-client'),
  member(UUID.toUpperCase(), `app-${UUID.toUpperCase()}-StreamThread-2-consumer`),
  member('0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg', 'app-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg-x'),
  member('0f1e2d3c+4b5a-6978-8796-a5b4c3d2e1f0', 'app'),
  member('process-1', 'app-process-1-StreamThread-1-consumer'),
  member('', 'app'),
  member('', ''),
  member(UUID, `app-${UUID}-StreamThread-1-consumer`, {
    instanceId: 'instance-1',
    rackId: 'rack-a',
    userEndpoint: { host: 'node-7.example.com', port: 8080 },
    clientTags: new Map([
      ['az', 'a'],
      ['zone', 'z'],
    ]),
  }),
]

test('a stored member has every field of the member it was made from', () => {
  const profiles = new MemberProfiles()
  for (const m of cases) {
    const stored = profiles.store(m)
    assert.ok(stored instanceof StoredMember)
    assert.deepEqual(memberValue(stored), m)
    assert.equal(profiles.store(stored), stored)
  }
})

test('members with the same metadata but their ids share a profile; others do not', () => {
  const profiles = new MemberProfiles()
  const other = '11111111-2222-3333-4444-555555555555'
  const a = profiles.store(member(UUID, `app-${UUID}-StreamThread-1-consumer`))
  const b = profiles.store(member(other, `app-${other}-StreamThread-1-consumer`))
  const c = profiles.store(member(other, `app-${other}-StreamThread-2-consumer`))
  assert.equal(a.clientId, `app-${UUID}-StreamThread-1-consumer`)
  assert.equal(b.clientId, `app-${other}-StreamThread-1-consumer`)
  assert.equal(c.clientId, `app-${other}-StreamThread-2-consumer`)
  assert.equal(a.processId, UUID)
  assert.equal(b.processId, other)
  // The tags map is the profile's: shared by a and b, not by c.
  const tagged = (pid: string, n: number) =>
    profiles.store(
      member(pid, `app-${pid}-StreamThread-${n}-consumer`, { clientTags: new Map([['az', String(n)]]) }),
    )
  assert.equal(tagged(UUID, 1).clientTags, tagged(other, 1).clientTags)
  assert.notEqual(tagged(UUID, 1).clientTags, tagged(other, 2).clientTags)
})

test('hasClientId: the exact client id only, for every form of process id and client id', () => {
  const profiles = new MemberProfiles()
  for (const m of cases) {
    const stored = profiles.store(m)
    assert.equal(stored.hasClientId(m.clientId), true, m.clientId)
    // A string of its own, as a request decoder makes it.
    assert.equal(stored.hasClientId(Buffer.from(m.clientId, 'utf8').toString('utf8')), true)
    assert.equal(stored.hasClientId(`${m.clientId}x`), false)
    assert.equal(stored.hasClientId(`x${m.clientId}`), false)
    assert.equal(stored.hasClientId(m.clientId.slice(1)), m.clientId === '')
    // Any one character changed, anywhere: in the parts around the process id and in it.
    for (let i = 0; i < m.clientId.length; i++) {
      for (const c of ['0', '9', 'a', 'f', 'g', 'F', '-', 'x', '\u0130', '\u0100']) {
        const changed = m.clientId.slice(0, i) + c + m.clientId.slice(i + 1)
        assert.equal(stored.hasClientId(changed), changed === m.clientId, changed)
      }
    }
  }
})

test('a Kafka Streams client id is kept in parts: its UUID as numbers, the rest in the profile', () => {
  const profiles = new MemberProfiles()
  const other = 'ffffffff-8000-0000-7fff-00000000ffff'
  const a = profiles.store(member(UUID, `app-${UUID}-StreamThread-1-consumer`))
  const b = profiles.store(member(other, `app-${other}-StreamThread-1-consumer`))
  // Built when read, the same text each time.
  assert.equal(b.processId, other)
  assert.equal(b.clientId, `app-${other}-StreamThread-1-consumer`)
  assert.equal(a.clientId, `app-${UUID}-StreamThread-1-consumer`)
  // No string of its own: the member's fields are numbers, the parts are shared.
  const own = Object.values(a).filter((v) => typeof v === 'string')
  assert.deepEqual(own.sort(), [a.clientHost, a.memberId].sort())
  assert.equal(b.hasClientId(`app-${UUID}-StreamThread-1-consumer`), false)
  assert.equal(a.hasClientId(`app-${other}-StreamThread-1-consumer`), false)
})

test('withAssignment: a copy with the assignment replaced, every other field kept', () => {
  const profiles = new MemberProfiles()
  for (const m of cases) {
    for (const from of [m, profiles.store(m)]) {
      const tasks = new TaskListBuilder().set('1', 0, 7).build()
      const next = withAssignment(from, {
        memberEpoch: 7,
        previousMemberEpoch: 3,
        state: MemberState.UNREVOKED_TASKS,
        assignedTasks: tasks,
        tasksPendingRevocation: m.assignedTasks,
      })
      assert.deepEqual(memberValue(next), {
        ...m,
        memberEpoch: 7,
        previousMemberEpoch: 3,
        state: MemberState.UNREVOKED_TASKS,
        assignedTasks: tasks,
        tasksPendingRevocation: m.assignedTasks,
      })
      assert.deepEqual(memberValue(from), m)
    }
  }
})

test('the profile pool: more distinct profiles than it keeps, every member still exact', () => {
  const profiles = new MemberProfiles()
  const made = Array.from({ length: 3000 }, (_, i) =>
    member(UUID, `app-${UUID}-StreamThread-${i % 7}-consumer`, { rackId: `rack-${i}` }),
  )
  const stored = made.map((m) => profiles.store(m))
  made.forEach((m, i) => {
    assert.deepEqual(memberValue(stored[i]!), m)
  })
  // After the pool started over, equal members share a profile again.
  const tags = () => new Map([['az', 'a']])
  const a = profiles.store(member(UUID, 'app', { rackId: 'again', clientTags: tags() }))
  const b = profiles.store(member(UUID, 'app', { rackId: 'again', clientTags: tags() }))
  assert.equal(a.clientTags, b.clientTags)
  assert.equal(a.rackId, 'again')
})

test('a stored member as its own slot: a replacement keeps the slot and its session, hands back the fields it had', () => {
  const profiles = new MemberProfiles()
  for (const m of cases) {
    const slot = profiles.store(m).toSlot()
    assert.ok(slot instanceof StoredMemberSlot)
    assert.equal(slot.member, slot)
    assert.deepEqual(memberValue(slot), m)
    slot.armed = true
    slot.dueMs = 45_000
    slot.deadlineMs = 50_000
    slot.target = m.assignedTasks
    const tasks = new TaskListBuilder().set('1', 0, 7).build()
    const next = profiles.store({
      ...withAssignment(m, {
        memberEpoch: 7,
        previousMemberEpoch: 3,
        state: MemberState.UNREVOKED_TASKS,
        assignedTasks: tasks,
        tasksPendingRevocation: m.assignedTasks,
      }),
      clientId: 'another-client',
      rackId: 'rack-b',
    })
    const old = slot.replace(next)
    // The fields it had, as a value of its own that later replacements leave alone.
    assert.ok(!(old instanceof StoredMemberSlot))
    assert.deepEqual(memberValue(old), m)
    assert.deepEqual(memberValue(slot), memberValue(next))
    assert.equal(slot.clientId, 'another-client')
    assert.equal(slot.hasClientId('another-client'), true)
    assert.equal(slot.hasClientId(m.clientId), m.clientId === 'another-client')
    // The session bookkeeping and target are the slot's, kept.
    assert.deepEqual(
      [slot.armed, slot.dueMs, slot.deadlineMs, slot.target],
      [true, 45_000, 50_000, m.assignedTasks],
    )
    slot.replace(profiles.store(m))
    assert.deepEqual(memberValue(old), m)
    assert.deepEqual(memberValue(slot), m)
  }
})

test("a slot's tasks, tasks pending revocation, target, state and armed are independent of each other", () => {
  const profiles = new MemberProfiles()
  const m = cases[0]!
  const slot = profiles.store(m).toSlot()
  const a = m.assignedTasks
  const b = new TaskListBuilder().set('0', 1, 5).build()
  const c = new TaskListBuilder().set('0', 4, 2).build()
  const pending = { active: c, standby: EMPTY_TASK_SET, warmup: b }
  // The slot's current-assignment fields (read one by one: a spread copies only its own data fields).
  const assignment = () => ({
    memberEpoch: slot.memberEpoch,
    previousMemberEpoch: slot.previousMemberEpoch,
    state: slot.state,
    assignedTasks: slot.assignedTasks,
    tasksPendingRevocation: slot.tasksPendingRevocation,
  })
  // A current-assignment record's update of the slot: these fields changed, the others kept.
  const reassign = (changes: Partial<ReturnType<typeof assignment>>) =>
    slot.replace(profiles.store(withAssignment(m, { ...assignment(), ...changes })))
  const fields = () => ({
    assigned: slot.assignedTasks,
    pending: slot.tasksPendingRevocation,
    target: slot.target,
    state: slot.state,
    armed: slot.armed,
    epochs: [slot.memberEpoch, slot.previousMemberEpoch],
  })
  const want = {
    assigned: a,
    pending: EMPTY_TASKS_WITH_EPOCHS,
    target: undefined as TasksTuple | undefined,
    state: m.state as number,
    armed: false,
    epochs: [m.memberEpoch, m.previousMemberEpoch],
  }
  // A new slot has no target.
  assert.deepEqual(fields(), want)
  const steps: [string, () => void, Partial<typeof want>][] = [
    ['target: its assigned tasks', () => (slot.target = a), { target: a }],
    ['armed', () => (slot.armed = true), { armed: true }],
    ['target: others', () => (slot.target = b), { target: b }],
    ['target: its assigned tasks again', () => (slot.target = a), { target: a }],
    [
      'a member that reconciles: tasks pending revocation, its state',
      () =>
        reassign({
          memberEpoch: 8,
          previousMemberEpoch: 7,
          state: MemberState.UNREVOKED_TASKS,
          assignedTasks: b,
          tasksPendingRevocation: pending,
        }),
      { assigned: b, pending, state: MemberState.UNREVOKED_TASKS, epochs: [8, 7] },
    ],
    ['target: its new assigned tasks', () => (slot.target = b), { target: b }],
    ['not armed', () => (slot.armed = false), { armed: false }],
    [
      'reconciled',
      () =>
        reassign({
          memberEpoch: 9,
          previousMemberEpoch: 8,
          state: MemberState.STABLE,
          tasksPendingRevocation: EMPTY_TASKS_WITH_EPOCHS,
        }),
      { pending: EMPTY_TASKS_WITH_EPOCHS, state: MemberState.STABLE, epochs: [9, 8] },
    ],
    ['armed again', () => (slot.armed = true), { armed: true }],
    ['assigned other tasks: the target stays', () => reassign({ assignedTasks: c }), { assigned: c }],
    ['no target', () => (slot.target = undefined), { target: undefined }],
    ['state unknown', () => reassign({ state: MemberState.UNKNOWN }), { state: MemberState.UNKNOWN }],
  ]
  for (const [what, step, changes] of steps) {
    const before = slot.snapshot()
    step()
    Object.assign(want, changes)
    assert.deepEqual(fields(), want, what)
    // The value the slot was before is unchanged.
    assert.ok(!(before instanceof StoredMemberSlot))
  }
})
