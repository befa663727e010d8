/**
 * The members of a modern group (consumer or streams) as their records built them: by member id,
 * with each member's session bookkeeping, and the static members by instance id (Kafka's
 * ModernGroup members and staticMembers).
 */
import { kept } from '../streams/strings.js'
import {
  DetachedSession,
  type MemberSession,
  MemberSlot,
  type MemberSlotOf,
  SlotSession,
  type SessionTimers,
} from './session.js'
import { sessionTimeoutKey } from './timers.js'

export interface ModernMember {
  readonly memberId: string
  readonly memberEpoch: number
  readonly previousMemberEpoch: number
  readonly instanceId: string | null
}

/** Builds a member's session-timeout operation from the group id and the stored member id. */
export type SessionTimeoutOpOf<R> = (groupId: string, memberId: string) => (nowMs: number) => R

/** Up to this many members, a table keeps its slots in an array searched in order (see Slots). */
const SEARCHED_SLOTS = 8

/** The slots of a table without members (shared: a table replaces its array, never changes it). */
const NO_SLOTS: readonly never[] = Object.freeze([])

/**
 * The slots of a table by member id (each slot's `memberId`, its member's), as a read-only map, in
 * the order members were first replayed. MemberTable is one (an object less a group).
 *
 * Up to SEARCHED_SLOTS members, the slots are one array of exactly their number, searched in order
 * by each slot's member id; above that, a Map. A Map costs a hash table of at least about 260 bytes
 * (about 50 a member at 5 members a group, the size of a Kafka Streams application's group); the
 * array 8 bytes a member (the ids are the slots' own, not kept a second time). The array is
 * replaced, never changed in place, so an iteration goes on over the slots it began with.
 */
class Slots<S extends { readonly memberId: string }> implements ReadonlyMap<string, S> {
  #slots: readonly S[] | Map<string, S> = NO_SLOTS

  get size(): number {
    const slots = this.#slots
    return slots instanceof Map ? slots.size : slots.length
  }
  get(memberId: string): S | undefined {
    const slots = this.#slots
    if (slots instanceof Map) return slots.get(memberId)
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!
      if (slot.memberId === memberId) return slot
    }
    return undefined
  }
  has(memberId: string): boolean {
    return this.get(memberId) !== undefined
  }
  /** Adds the slot of a member not in the table. */
  protected addSlot(slot: S): void {
    const slots = this.#slots
    if (slots instanceof Map) slots.set(slot.memberId, slot)
    else if (slots.length < SEARCHED_SLOTS) this.#slots = slots.concat(slot)
    else {
      const map = new Map<string, S>()
      for (const s of slots) map.set(s.memberId, s)
      this.#slots = map.set(slot.memberId, slot)
    }
  }
  protected deleteSlot(memberId: string): void {
    const slots = this.#slots
    if (slots instanceof Map) {
      if (!slots.delete(memberId) || slots.size > SEARCHED_SLOTS) return
      this.#slots = [...slots.values()]
      return
    }
    for (let i = 0; i < slots.length; i++) {
      if (slots[i]!.memberId !== memberId) continue
      this.#slots = slots.length === 1 ? NO_SLOTS : slots.slice(0, i).concat(slots.slice(i + 1))
      return
    }
  }
  forEach(fn: (slot: S, memberId: string, map: ReadonlyMap<string, S>) => void, thisArg?: unknown): void {
    for (const [id, s] of this) fn.call(thisArg, s, id, this)
  }
  *entries(): MapIterator<[string, S]> {
    const slots = this.#slots
    if (slots instanceof Map) yield* slots.entries()
    else for (const s of slots) yield [s.memberId, s]
  }
  *keys(): MapIterator<string> {
    for (const [id] of this) yield id
  }
  *values(): MapIterator<S> {
    const slots = this.#slots
    if (slots instanceof Map) yield* slots.values()
    else yield* slots
  }
  [Symbol.iterator](): MapIterator<[string, S]> {
    return this.entries()
  }
}

/** The members of a table as a read-only map, read through its slots (made when asked for). */
class MembersView<M extends ModernMember> implements ReadonlyMap<string, M> {
  readonly #slots: ReadonlyMap<string, MemberSlotOf<M>>

  constructor(slots: ReadonlyMap<string, MemberSlotOf<M>>) {
    this.#slots = slots
  }
  get size(): number {
    return this.#slots.size
  }
  get(memberId: string): M | undefined {
    return this.#slots.get(memberId)?.member
  }
  has(memberId: string): boolean {
    return this.#slots.has(memberId)
  }
  forEach(fn: (member: M, memberId: string, map: ReadonlyMap<string, M>) => void, thisArg?: unknown): void {
    for (const [id, s] of this.#slots) fn.call(thisArg, s.member, id, this)
  }
  *entries(): MapIterator<[string, M]> {
    for (const [id, s] of this.#slots) yield [id, s.member]
  }
  keys(): MapIterator<string> {
    return this.#slots.keys()
  }
  *values(): MapIterator<M> {
    for (const s of this.#slots.values()) yield s.member
  }
  [Symbol.iterator](): MapIterator<[string, M]> {
    return this.entries()
  }
}

/**
 * `S`: the slot class; a group that keeps more with each member (a streams member's target), or
 * keeps its members as their own slots, makes its own by overriding newSlot.
 */
export class MemberTable<M extends ModernMember, R, S extends MemberSlotOf<M> = MemberSlot<M, R>>
  extends Slots<S>
  implements SessionTimers<R>
{
  readonly #groupId: string
  /** Made when the first static member comes (most groups have none). */
  #staticMembers: Map<string, string> | null = null
  readonly #sessionTimeoutOp: SessionTimeoutOpOf<R>

  constructor(groupId: string, sessionTimeoutOp: SessionTimeoutOpOf<R>) {
    super()
    this.#groupId = groupId
    this.#sessionTimeoutOp = sessionTimeoutOp
  }

  /** In the order members were first replayed (a view made when asked for: one object less a group). */
  get members(): ReadonlyMap<string, M> {
    return new MembersView<M>(this)
  }
  slot(memberId: string): S | undefined {
    return this.get(memberId)
  }
  /** The slots by member id, in the order members were first replayed (the table itself). */
  get slots(): ReadonlyMap<string, S> {
    return this
  }
  member(memberId: string): M | undefined {
    return this.get(memberId)?.member
  }
  staticMemberId(instanceId: string | null): string | undefined {
    return instanceId === null ? undefined : this.#staticMembers?.get(instanceId)
  }

  /**
   * The member's session timeout: for a stored member its slot (or, for a slot that makes no key
   * and operation of its own, a SlotSession over it), whose key and operation are made from the
   * group id and the stored member id (never the caller's string, which may be a fresh request's)
   * when its timer is armed; for a member not stored yet, a fresh one that is not kept.
   */
  session(memberId: string): MemberSession<R> {
    const slot = this.get(memberId)
    if (slot instanceof MemberSlot) return slot as MemberSlot<M, R>
    if (slot !== undefined)
      return new SlotSession(slot, this.sessionKey(slot.memberId), this.sessionOp(slot.memberId))
    // The runtime may keep the key and operation long after this request (see strings.ts).
    const id = kept(memberId)
    return new DetachedSession(this.sessionKey(id), this.sessionOp(id))
  }

  /** The session-timeout key of a member (`memberId` a stored or kept string). */
  sessionKey(memberId: string): string {
    return sessionTimeoutKey(this.#groupId, memberId)
  }

  /** The session-timeout operation of a member (`memberId` a stored or kept string). */
  sessionOp(memberId: string): (nowMs: number) => R {
    return this.#sessionTimeoutOp(this.#groupId, memberId)
  }

  /** A new member's slot. */
  protected newSlot(member: M): S {
    return new MemberSlot<M, R>(member, this) as unknown as S
  }

  /** Adds or replaces a member; returns the one it replaced. */
  put(member: M): M | undefined {
    const slot = this.get(member.memberId)
    let old: M | undefined
    if (slot !== undefined) old = slot.replace(member)
    else this.addSlot(this.newSlot(member))
    if (
      old?.instanceId &&
      old.instanceId !== member.instanceId &&
      this.#staticMembers?.get(old.instanceId) === member.memberId
    ) {
      this.#staticMembers!.delete(old.instanceId)
    }
    if (member.instanceId !== null)
      (this.#staticMembers ??= new Map()).set(member.instanceId, member.memberId)
    return old
  }

  /** Removes a member; returns it. */
  remove(memberId: string): M | undefined {
    const old = this.get(memberId)?.member
    if (!old) return undefined
    this.deleteSlot(memberId)
    if (old.instanceId !== null && this.#staticMembers?.get(old.instanceId) === memberId) {
      this.#staticMembers!.delete(old.instanceId)
    }
    return old
  }
}
