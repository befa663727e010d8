import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MemberTable, type ModernMember } from '../../../../src/coordinator/shard/modern/members.js'
import type { MemberSlotOf } from '../../../../src/coordinator/shard/modern/session.js'

const member = (memberId: string, memberEpoch = 1, instanceId: string | null = null): ModernMember => ({
  memberId,
  memberEpoch,
  previousMemberEpoch: 0,
  instanceId,
})

const newTable = () =>
  new MemberTable<ModernMember, string>(
    'g',
    (groupId, memberId) => (nowMs) => `${groupId}/${memberId}@${nowMs}`,
  )

/** Everything the table answers, in its order. */
function contents(t: MemberTable<ModernMember, string>) {
  return {
    size: t.size,
    keys: [...t.keys()],
    members: [...t.members.values()].map((m) => [m.memberId, m.memberEpoch]),
    entries: [...t.entries()].map(([id, s]) => [id, s.member.memberId]),
    forEach: (() => {
      const ids: string[] = []
      t.forEach((s, id) => {
        ids.push(`${id}=${s.member.memberId}`)
      })
      return ids
    })(),
  }
}

function expected(ids: readonly string[], epochs: ReadonlyMap<string, number>) {
  return {
    size: ids.length,
    keys: [...ids],
    members: ids.map((id) => [id, epochs.get(id)]),
    entries: ids.map((id) => [id, id]),
    forEach: ids.map((id) => `${id}=${id}`),
  }
}

test('a table keeps its order, lookups and slots as it grows past eight members and shrinks again', () => {
  const t = newTable()
  const epochs = new Map<string, number>()
  const ids: string[] = []
  const slots = new Map<string, unknown>()
  // Ids of one length, differing late: a search must compare whole ids.
  const id = (n: number) => `member-${String(n).padStart(3, '0')}`
  for (let n = 0; n < 20; n++) {
    assert.equal(t.put(member(id(n), n)), undefined)
    ids.push(id(n))
    epochs.set(id(n), n)
    slots.set(id(n), t.slot(id(n)))
    assert.deepEqual(contents(t), expected(ids, epochs))
    for (const known of ids) {
      assert.equal(t.has(known), true)
      assert.equal(t.member(known)?.memberEpoch, epochs.get(known))
      assert.equal(t.slot(known), slots.get(known), `${known} keeps its slot at ${ids.length} members`)
    }
    assert.equal(t.get(id(n + 1)), undefined)
    assert.equal(t.has(`${id(n)}x`), false)
  }
  // Replacing a member keeps its slot and its place.
  const old = t.put(member(id(4), 100))
  assert.deepEqual(old, member(id(4), 4))
  epochs.set(id(4), 100)
  assert.equal(t.slot(id(4)), slots.get(id(4)))
  assert.deepEqual(contents(t), expected(ids, epochs))
  // Removing from the front, the back and the middle, down to none.
  for (const n of [0, 19, 10, 5, 1, 18, 2, 3, 17, 16, 6, 7, 15, 14, 13, 8, 12, 9, 11, 4]) {
    assert.equal(t.remove(id(n))?.memberId, id(n))
    ids.splice(ids.indexOf(id(n)), 1)
    assert.equal(t.has(id(n)), false)
    assert.equal(t.remove(id(n)), undefined)
    assert.deepEqual(contents(t), expected(ids, epochs))
    for (const known of ids) assert.equal(t.slot(known), slots.get(known))
  }
  // Members that come back get new slots, after the ones still there.
  t.put(member('b'))
  t.put(member('a'))
  assert.deepEqual([...t.keys()], ['b', 'a'])
})

test('a static member is found by its instance id across the growth of the table', () => {
  const t = newTable()
  for (let n = 0; n < 12; n++) t.put(member(`m${n}`, 1, n % 3 === 0 ? `i${n}` : null))
  assert.deepEqual(
    [0, 3, 6, 9].map((n) => t.staticMemberId(`i${n}`)),
    ['m0', 'm3', 'm6', 'm9'],
  )
  for (let n = 0; n < 12; n++) if (n !== 6) t.remove(`m${n}`)
  assert.deepEqual([t.staticMemberId('i0'), t.staticMemberId('i6'), t.size], [undefined, 'm6', 1])
})

test("a slot that makes no timer key and operation of its own: the table's session reads and writes through to it", () => {
  /** A slot with only the bookkeeping and the member (as a streams member's slot is). */
  class BareSlot implements MemberSlotOf<ModernMember> {
    deadlineMs = 0
    armed = false
    dueMs = 0
    readonly member: ModernMember
    readonly memberId: string
    constructor(member: ModernMember) {
      this.member = member
      this.memberId = member.memberId
    }
    replace(): ModernMember {
      throw new Error('no member is replaced here')
    }
  }
  class BareTable extends MemberTable<ModernMember, string, BareSlot> {
    protected override newSlot(member: ModernMember): BareSlot {
      return new BareSlot(member)
    }
  }
  const t = new BareTable('g', (groupId, memberId) => (nowMs) => `${groupId}/${memberId}@${nowMs}`)
  t.put(member('m1'))
  const slot = t.slot('m1')!
  const session = t.session('m1')
  assert.equal(session.key, 'session-timeout-g-m1')
  assert.equal(session.op(7), 'g/m1@7')
  session.armed = true
  session.dueMs = 45_000
  session.deadlineMs = 50_000
  assert.deepEqual([slot.armed, slot.dueMs, slot.deadlineMs], [true, 45_000, 50_000])
  slot.armed = false
  slot.deadlineMs = 60_000
  assert.deepEqual([session.armed, session.deadlineMs], [false, 60_000])
  // A member not in the table: a session of its own, not kept.
  const detached = t.session('m2')
  assert.equal(detached.key, 'session-timeout-g-m2')
  detached.armed = true
  assert.equal(t.session('m2').armed, false)
  // The default slots are their own sessions.
  const table = newTable()
  table.put(member('m1'))
  assert.equal(table.session('m1'), table.slot('m1'))
})
