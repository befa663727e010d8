import type { CoordinatorRecord } from '../../../../src/protocol/generated/coordinator-records.js'
import {
  createJoinGroupRequest,
  type JoinGroupRequest,
} from '../../../../src/protocol/generated/messages/JoinGroupRequest.js'
import type { JoinGroupResponse } from '../../../../src/protocol/generated/messages/JoinGroupResponse.js'
import {
  createSyncGroupRequest,
  type SyncGroupRequest,
} from '../../../../src/protocol/generated/messages/SyncGroupRequest.js'
import type { SyncGroupResponse } from '../../../../src/protocol/generated/messages/SyncGroupResponse.js'
import {
  type ClassicCompletion,
  type ClassicGroupConfig,
  ClassicGroupManager,
  type ClassicJoinOutcome,
  type ClassicResult,
  type OtherGroupTypes,
} from '../../../../src/coordinator/shard/classic/index.js'
import type { MemoryRecordStore } from '../../../../src/coordinator/storage/memory.js'
import { ShardTestContext } from '../../../testkit/shard-context.js'

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s)

export const CONFIG: ClassicGroupConfig = {
  minSessionTimeoutMs: 6000,
  maxSessionTimeoutMs: 1800000,
  initialRebalanceDelayMs: 3000,
  maxSize: 10,
  newMemberJoinTimeoutMs: 300000,
}

/**
 * Drives a ClassicGroupManager as the shard of the REAL runtime (test/testkit): every operation is a
 * write operation, its records are appended and replayed, its timers are the runtime's (fired by
 * `advance` on the manual clock) and its completions are delivered by the runtime once stored.
 */
export class Harness {
  readonly t: ShardTestContext<ClassicGroupManager, CoordinatorRecord, ClassicCompletion>
  /** Completions delivered for stored operations, by token. */
  readonly completions = new Map<number, ClassicCompletion>()
  /** Completions whose operation's append failed, by token. */
  readonly failed = new Map<number, ClassicCompletion>()
  #nextToken = 1
  #nextUuid = 1

  private constructor(t: ShardTestContext<ClassicGroupManager, CoordinatorRecord, ClassicCompletion>) {
    this.t = t
  }

  static async start(
    options: {
      config?: ClassicGroupConfig
      otherGroups?: OtherGroupTypes
      /** A store to load from (a restart) and the time to start at. */
      store?: MemoryRecordStore
      startMs?: number
    } = {},
  ): Promise<Harness> {
    let h: Harness | undefined
    const t = await ShardTestContext.start<ClassicGroupManager, CoordinatorRecord, ClassicCompletion>({
      store: options.store,
      startMs: options.startMs,
      newShard: () =>
        new ClassicGroupManager({ config: options.config ?? CONFIG, otherGroups: options.otherGroups }),
      onComplete: (c, failure) => {
        const into = failure === undefined ? h!.completions : h!.failed
        if (into.has(c.token)) throw new Error(`token ${c.token} completed twice`)
        into.set(c.token, c)
      },
    })
    h = new Harness(t)
    return h
  }

  get manager(): ClassicGroupManager {
    return this.t.shard
  }

  get nowMs(): number {
    return this.t.nowMs
  }

  /**
   * Runs a result computed outside the runtime (a manager call the test made itself) as a write
   * operation: its records are appended and replayed, its timers armed, its completions delivered.
   */
  async apply<T>(r: ClassicResult<T>): Promise<T> {
    return this.t.write('apply', () => r)
  }

  /** Runs `op` as a write operation whose append fails (nothing replayed, no timer armed). */
  async failing<T>(
    op: (m: ClassicGroupManager, nowMs: number) => ClassicResult<T>,
  ): Promise<ClassicResult<T>> {
    let produced: ClassicResult<T> | undefined
    await this.t
      .write('failing', (m, nowMs) => {
        produced = op(m, nowMs)
        if (produced.records.length > 0) this.t.failNextAppend()
        return produced
      })
      .catch(() => undefined)
    return produced!
  }

  token(): number {
    return this.#nextToken++
  }

  async join(
    init: Partial<JoinGroupRequest>,
    options: { apiVersion?: number; clientId?: string; conversionReady?: boolean } = {},
  ): Promise<{ token: number; result: ClassicResult<ClassicJoinOutcome> }> {
    const token = this.token()
    const uuid = `uuid${this.#nextUuid++}`
    let result: ClassicResult<ClassicJoinOutcome> | undefined
    await this.t.write('classic-group-join', (m, nowMs) => {
      result = m.classicGroupJoin(
        {
          nowMs,
          apiVersion: options.apiVersion ?? 9,
          clientId: options.clientId ?? 'client',
          clientHost: '/127.0.0.1',
          token,
          newMemberUuid: uuid,
          conversionReady: options.conversionReady,
        },
        createJoinGroupRequest({
          groupId: 'g',
          sessionTimeoutMs: 10000,
          rebalanceTimeoutMs: 60000,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: enc('meta') }],
          ...init,
        }),
      )
      return result
    })
    return { token, result: result! }
  }

  async sync(init: Partial<SyncGroupRequest>, apiVersion = 5): Promise<{ token: number }> {
    const token = this.token()
    await this.t.write('classic-group-sync', (m, nowMs) =>
      m.classicGroupSync(
        { nowMs, apiVersion, token },
        createSyncGroupRequest({ groupId: 'g', protocolType: 'consumer', protocolName: 'range', ...init }),
      ),
    )
    return { token }
  }

  joinResponse(token: number): JoinGroupResponse | undefined {
    const c = this.completions.get(token)
    if (c === undefined) return undefined
    if (c.api !== 'JoinGroup') throw new Error(`token ${token} is a ${c.api}`)
    return c.response
  }

  syncResponse(token: number): SyncGroupResponse | undefined {
    const c = this.completions.get(token)
    if (c === undefined) return undefined
    if (c.api !== 'SyncGroup') throw new Error(`token ${token} is a ${c.api}`)
    return c.response
  }

  /** Moves the clock forward; the runtime fires due timers in due order. */
  advance(ms: number): Promise<void> {
    return this.t.advance(ms)
  }

  isScheduled(key: string): boolean {
    return this.t.isScheduled(key)
  }

  /** How long until the runtime's timer fires (undefined when not armed). */
  delayOf(key: string): number | undefined {
    const due = this.t.runtime.timer(0).dueMs(key)
    return due === undefined ? undefined : due - this.nowMs
  }

  /** Every record stored so far, in log order. */
  records(): Promise<CoordinatorRecord[]> {
    return this.t.log()
  }

  /** A restart: a new runtime loads this one's log (and runs the on-loaded operation). */
  reload(options: { config?: ClassicGroupConfig; otherGroups?: OtherGroupTypes } = {}): Promise<Harness> {
    return Harness.start({ ...options, store: this.t.store, startMs: this.nowMs })
  }

  close(): Promise<void> {
    return this.t.close()
  }
}

/** The persisted view of a group: what a GroupMetadata checkpoint holds plus the derived state. */
export function persistedView(m: ClassicGroupManager, groupId: string): unknown {
  const g = m.group(groupId)
  if (!g) return undefined
  return {
    state: g.state,
    generationId: g.generationId,
    protocolType: g.protocolType,
    protocolName: g.protocolName,
    leaderId: g.leaderId,
    currentStateTimestamp: g.currentStateTimestamp,
    members: [...g.members.values()].map((x) => ({
      memberId: x.memberId,
      groupInstanceId: x.groupInstanceId,
      clientId: x.clientId,
      clientHost: x.clientHost,
      rebalanceTimeoutMs: x.rebalanceTimeoutMs,
      sessionTimeoutMs: x.sessionTimeoutMs,
      metadata: [...x.metadata(g.protocolName)],
      assignment: [...x.assignment],
    })),
    staticMembers: [...g.staticMembers.entries()].sort(),
  }
}
