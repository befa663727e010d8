/**
 * Drives a ClassicGroupManager the way the runtime and service do: records are replayed after each
 * operation, timer intents are kept on a fake clock, completions are collected by token.
 */
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
  type ClassicResult,
  type ClassicTimer,
  type OtherGroupTypes,
} from '../../../../src/coordinator/shard/classic/index.js'

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s)

export const CONFIG: ClassicGroupConfig = {
  minSessionTimeoutMs: 6000,
  maxSessionTimeoutMs: 1800000,
  initialRebalanceDelayMs: 3000,
  maxSize: 10,
  newMemberJoinTimeoutMs: 300000,
}

interface PendingTimer {
  readonly fireAt: number
  readonly timer: ClassicTimer
}

export class Harness {
  readonly manager: ClassicGroupManager
  nowMs = 1_000_000
  readonly log: CoordinatorRecord[] = []
  readonly timers = new Map<string, PendingTimer>()
  readonly completions = new Map<number, ClassicCompletion>()
  #nextToken = 1
  #nextUuid = 1

  constructor(options: { config?: ClassicGroupConfig; otherGroups?: OtherGroupTypes } = {}) {
    this.manager = new ClassicGroupManager({
      config: options.config ?? CONFIG,
      otherGroups: options.otherGroups,
    })
  }

  /** Appends then replays the records, applies timer intents, collects completions. */
  apply(r: ClassicResult<unknown>): void {
    for (const rec of r.records) {
      this.log.push(rec)
      this.manager.replay(rec)
    }
    for (const key of r.timers?.cancel ?? []) this.timers.delete(key)
    for (const t of r.timers?.schedule ?? [])
      this.timers.set(t.key, { fireAt: this.nowMs + t.delayMs, timer: t })
    for (const c of r.completions ?? []) {
      if (this.completions.has(c.token)) throw new Error(`token ${c.token} completed twice`)
      this.completions.set(c.token, c)
    }
  }

  token(): number {
    return this.#nextToken++
  }

  join(
    init: Partial<JoinGroupRequest>,
    options: { apiVersion?: number; clientId?: string; conversionReady?: boolean } = {},
  ): { token: number; result: ReturnType<ClassicGroupManager['classicGroupJoin']> } {
    const token = this.token()
    const result = this.manager.classicGroupJoin(
      {
        nowMs: this.nowMs,
        apiVersion: options.apiVersion ?? 9,
        clientId: options.clientId ?? 'client',
        clientHost: '/127.0.0.1',
        token,
        newMemberUuid: `uuid${this.#nextUuid++}`,
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
    this.apply(result)
    return { token, result }
  }

  sync(init: Partial<SyncGroupRequest>, apiVersion = 5): { token: number } {
    const token = this.token()
    const result = this.manager.classicGroupSync(
      { nowMs: this.nowMs, apiVersion, token },
      createSyncGroupRequest({ groupId: 'g', protocolType: 'consumer', protocolName: 'range', ...init }),
    )
    this.apply(result)
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

  /** Moves the clock forward, firing due timers in time order (then key order). */
  advance(ms: number): void {
    const end = this.nowMs + ms
    for (;;) {
      const due = [...this.timers.entries()]
        .filter(([, t]) => t.fireAt <= end)
        .sort((a, b) => a[1].fireAt - b[1].fireAt || (a[0] < b[0] ? -1 : 1))
      const next = due[0]
      if (next === undefined) break
      this.timers.delete(next[0])
      this.nowMs = next[1].fireAt
      this.apply(next[1].timer.op(this.nowMs))
    }
    this.nowMs = end
  }

  delayOf(key: string): number | undefined {
    const t = this.timers.get(key)
    return t === undefined ? undefined : t.fireAt - this.nowMs
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
