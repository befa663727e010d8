/**
 * The asynchronous side of classic groups: it holds the promises of parked JoinGroup / SyncGroup
 * requests, runs the classic manager's operations as shard writes, answers parked requests with
 * the completions the runtime delivers (once their operation's records are stored, or with the
 * storage error), and loops a join through the streams → classic conversion when the manager asks
 * for it. The classic timers are the runtime's, like every shard's timers.
 *
 * It needs a host (the group coordinator service) that runs a write operation against the
 * ClassicGroupManager of the shard owning a group id; see {@link ClassicGroupsHost}.
 */
import { ErrorCode } from '../../protocol/errors.js'
import type { HeartbeatRequest } from '../../protocol/generated/messages/HeartbeatRequest.js'
import {
  createHeartbeatResponse,
  type HeartbeatResponse,
} from '../../protocol/generated/messages/HeartbeatResponse.js'
import type { JoinGroupRequest } from '../../protocol/generated/messages/JoinGroupRequest.js'
import {
  createJoinGroupResponse,
  type JoinGroupResponse,
} from '../../protocol/generated/messages/JoinGroupResponse.js'
import type { LeaveGroupRequest } from '../../protocol/generated/messages/LeaveGroupRequest.js'
import {
  createLeaveGroupResponse,
  type LeaveGroupResponse,
} from '../../protocol/generated/messages/LeaveGroupResponse.js'
import type { SyncGroupRequest } from '../../protocol/generated/messages/SyncGroupRequest.js'
import {
  createSyncGroupResponse,
  type SyncGroupResponse,
} from '../../protocol/generated/messages/SyncGroupResponse.js'
import type { ClassicGroupManager } from '../shard/classic/manager.js'
import type { ClassicCompletion, ClassicResult } from '../shard/classic/types.js'
import { StreamsConversionError } from './topology-description-manager.js'

/**
 * The classic operations of a shard: the shard's own (which route a request for a consumer group
 * with classic-protocol members to that group), or a ClassicGroupManager alone.
 */
export type ClassicGroupOperations = Pick<
  ClassicGroupManager,
  | 'classicGroupJoin'
  | 'classicGroupSync'
  | 'classicGroupHeartbeat'
  | 'classicGroupLeave'
  | 'classicGroupSyncWriteFailed'
  | 'classicGroupJoinWriteFailed'
>

/** What the classic groups need from the group coordinator service. */
export interface ClassicGroupsHost {
  /**
   * Runs `op` as a write operation named `name` on the shard that owns `groupId`: the records are
   * appended, replayed (GroupMetadata into that shard's ClassicGroupManager), its timers armed and
   * its completions delivered (to {@link ClassicGroupsService.complete}), then the promise resolves
   * with the response. Rejects when the write fails.
   */
  write<T>(
    name: string,
    groupId: string,
    op: (classic: ClassicGroupOperations, nowMs: number) => ClassicResult<T>,
  ): Promise<T>
  /** The Kafka error code for a failed operation (the service's one translation point). */
  errorCode(err: unknown, operation: string): number
  /**
   * Cleans up what an empty streams group holds outside the shard before it becomes classic (its
   * stored topology description). It may resolve with a finalize step, run once the join that
   * follows has been written, whatever it answered. A rejection answers the join: a
   * {@link StreamsConversionError} with its code (the member id echoed only when it says so), anything
   * else REBALANCE_IN_PROGRESS with the request's member id. Absent: nothing to clean up.
   */
  prepareStreamsConversion?(groupId: string): Promise<void | (() => Promise<void>)>
  /**
   * Whether a cleanup runs before conversions (a topology description plugin is configured). When
   * false, a join converts an empty streams group directly. Absent: whether
   * `prepareStreamsConversion` is given.
   */
  streamsConversionCleanupConfigured?(): boolean
  /**
   * A leader's SyncGroup stored its generation's assignment: the group completed a rebalance
   * (Kafka's `group-completed-rebalance` sensor).
   */
  rebalanceCompleted?(): void
}

export interface ClassicRequestContext {
  readonly apiVersion: number
  readonly clientId: string
  readonly clientHost: string
}

interface Parked {
  readonly resolve: (c: ClassicCompletion) => void
  readonly groupId: string
  readonly api: ClassicCompletion['api']
}

export class ClassicGroupsService {
  readonly #host: ClassicGroupsHost
  readonly #newUuid: () => string
  readonly #newConsumerMemberId: () => string
  readonly #parked = new Map<number, Parked>()
  #nextToken = 1
  /** Set by {@link close}: nothing parks any more. */
  #closing = false

  /**
   * `newUuid` draws the uuid of a classic member's id (`<client id>-<uuid>`), `newConsumerMemberId`
   * the id of a classic member joining a consumer group (`newUuid` when not given).
   */
  constructor(host: ClassicGroupsHost, newUuid: () => string, newConsumerMemberId: () => string = newUuid) {
    this.#host = host
    this.#newUuid = newUuid
    this.#newConsumerMemberId = newConsumerMemberId
  }

  async joinGroup(ctx: ClassicRequestContext, request: JoinGroupRequest): Promise<JoinGroupResponse> {
    const token = this.#nextToken++
    const answer = this.#park(token, request.groupId, 'JoinGroup')
    // Kafka's topologyCleanupHandled = !pluginConfigured: without a cleanup the join converts at once.
    let conversionReady = !(
      this.#host.streamsConversionCleanupConfigured?.() ?? this.#host.prepareStreamsConversion !== undefined
    )
    let finalize: (() => Promise<void>) | undefined
    for (;;) {
      const uuid = this.#newUuid()
      const newConsumerMemberId = this.#newConsumerMemberId()
      try {
        const result = await this.#host.write('classic-group-join', request.groupId, (classic, nowMs) =>
          classic.classicGroupJoin(
            { ...ctx, nowMs, token, newMemberUuid: uuid, newConsumerMemberId, conversionReady },
            request,
          ),
        )
        if (result.conversionRequired === null || conversionReady) break
        const prepared = await this.#prepareConversion(token, request)
        if (prepared === false) break
        finalize = prepared
        conversionReady = true
      } catch (err) {
        const errorCode = this.#host.errorCode(err, 'classic-group-join')
        this.#answerWithError(token, 'JoinGroup', errorCode)
        await this.#joinNotStored(request.groupId, errorCode)
        break
      }
    }
    // After the re-join, whether it converted or not (a revived streams group answers
    // INCONSISTENT_GROUP_PROTOCOL): the stored description epoch is made consistent again.
    if (finalize !== undefined) {
      try {
        await finalize()
      } catch {
        // A failed finalize leaves the group at −2: still reclaimable, and the next cycle retries.
      }
    }
    const c = await answer
    return c.api === 'JoinGroup'
      ? c.response
      : createJoinGroupResponse({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR })
  }

  async syncGroup(ctx: ClassicRequestContext, request: SyncGroupRequest): Promise<SyncGroupResponse> {
    const token = this.#nextToken++
    const answer = this.#park(token, request.groupId, 'SyncGroup')
    let wroteAssignment = false
    try {
      await this.#host.write('classic-group-sync', request.groupId, (classic, nowMs) => {
        const r = classic.classicGroupSync({ nowMs, apiVersion: ctx.apiVersion, token }, request)
        // Only the leader's SyncGroup of a completing generation writes (its assignment).
        wroteAssignment = r.records.length > 0
        return r
      })
      if (wroteAssignment) this.#host.rebalanceCompleted?.()
    } catch (err) {
      const errorCode = this.#host.errorCode(err, 'classic-group-sync')
      this.#answerWithError(token, 'SyncGroup', errorCode)
      if (wroteAssignment) await this.#assignmentNotStored(request.groupId, request.generationId, errorCode)
    }
    const c = await answer
    return c.api === 'SyncGroup'
      ? c.response
      : createSyncGroupResponse({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR })
  }

  async heartbeat(ctx: ClassicRequestContext, request: HeartbeatRequest): Promise<HeartbeatResponse> {
    try {
      return await this.#host.write('classic-group-heartbeat', request.groupId, (classic, nowMs) =>
        classic.classicGroupHeartbeat({ nowMs, apiVersion: ctx.apiVersion }, request),
      )
    } catch (err) {
      return createHeartbeatResponse({ errorCode: this.#host.errorCode(err, 'classic-group-heartbeat') })
    }
  }

  async leaveGroup(ctx: ClassicRequestContext, request: LeaveGroupRequest): Promise<LeaveGroupResponse> {
    try {
      return await this.#host.write('classic-group-leave', request.groupId, (classic, nowMs) =>
        classic.classicGroupLeave({ nowMs, apiVersion: ctx.apiVersion }, request),
      )
    } catch (err) {
      return createLeaveGroupResponse({ errorCode: this.#host.errorCode(err, 'classic-group-leave') })
    }
  }

  /**
   * Runs the host's cleanup before an empty streams group becomes classic; resolves with its
   * finalize step, or false once the join was answered. When the cleanup fails, the join answers
   * REBALANCE_IN_PROGRESS with the request's member id (KIP-1331), so the client retries; a failed
   * coordinator operation inside it answers its own code without the member id.
   */
  async #prepareConversion(
    token: number,
    request: JoinGroupRequest,
  ): Promise<(() => Promise<void>) | undefined | false> {
    try {
      return (await this.#host.prepareStreamsConversion?.(request.groupId)) ?? undefined
    } catch (err) {
      const conversion = err instanceof StreamsConversionError ? err : null
      const p = this.#parked.get(token)
      this.#parked.delete(token)
      p?.resolve({
        api: 'JoinGroup',
        token,
        response: createJoinGroupResponse({
          memberId: conversion === null || conversion.echoMemberId ? request.memberId : '',
          errorCode: conversion?.errorCode ?? ErrorCode.REBALANCE_IN_PROGRESS,
        }),
      })
      return false
    }
  }

  /**
   * A completion the runtime delivers: once its operation's records are stored (`failure`
   * undefined), the parked request gets its answer; when they could not be, it gets the storage
   * error instead, so the client retries.
   */
  complete(completion: ClassicCompletion, failure: unknown): void {
    if (failure === undefined) {
      const p = this.#parked.get(completion.token)
      if (p === undefined) return
      this.#parked.delete(completion.token)
      p.resolve(completion)
      return
    }
    this.#answerWithError(
      completion.token,
      completion.api,
      this.#host.errorCode(failure, 'classic-group-completion'),
    )
  }

  /**
   * The coordinator is shutting down: parked JoinGroup and SyncGroup requests are answered
   * NOT_COORDINATOR now, each in its own API's shape, as Kafka answers them when a shard unloads
   * (the clients find the coordinator again and rejoin), and requests that come after are answered
   * so at once instead of parking. The server calls this before it waits for its connections'
   * answers: a parked join can wait a whole rebalance timeout, on timers that stop at shutdown.
   */
  close(): void {
    this.#closing = true
    for (const [token, p] of [...this.#parked]) this.#answerWithError(token, p.api, ErrorCode.NOT_COORDINATOR)
  }

  /** Requests still waiting for an answer (for tests and metrics). */
  get parkedCount(): number {
    return this.#parked.size
  }

  /**
   * The leader's assignment could not be stored: the group rebalances straight away (Kafka), instead
   * of waiting in CompletingRebalance for a SyncGroup that will not come.
   */
  async #assignmentNotStored(groupId: string, generationId: number, errorCode: number): Promise<void> {
    try {
      await this.#host.write('classic-group-sync-write-failed', groupId, (classic, nowMs) =>
        classic.classicGroupSyncWriteFailed(groupId, generationId, errorCode, nowMs),
      )
    } catch {
      // The shard cannot be written either: the members' next requests get the same error and rejoin.
    }
  }

  /**
   * A join's records could not be stored: a group it created goes again and a static member's new
   * id gives way to the old one (Kafka), instead of staying in memory without the timers the failed
   * join would have armed.
   */
  async #joinNotStored(groupId: string, errorCode: number): Promise<void> {
    try {
      await this.#host.write('classic-group-join-write-failed', groupId, (classic) =>
        classic.classicGroupJoinWriteFailed(groupId, errorCode),
      )
    } catch {
      // It writes nothing: it fails only when its shard stops or reloads from its log, which drops
      // what the failed join left in memory anyway.
    }
  }

  #answerWithError(token: number, api: ClassicCompletion['api'], errorCode: number): void {
    const p = this.#parked.get(token)
    if (p === undefined) return
    this.#parked.delete(token)
    p.resolve(
      api === 'SyncGroup'
        ? { api, token, response: createSyncGroupResponse({ errorCode }) }
        : { api, token, response: createJoinGroupResponse({ errorCode }) },
    )
  }

  #park(token: number, groupId: string, api: ClassicCompletion['api']): Promise<ClassicCompletion> {
    const parked = new Promise<ClassicCompletion>((resolve) =>
      this.#parked.set(token, { resolve, groupId, api }),
    )
    if (this.#closing) this.#answerWithError(token, api, ErrorCode.NOT_COORDINATOR)
    return parked
  }

  /**
   * A shard was reloaded from its log (a failed batch of writes): the in-memory join and sync
   * phases its parked requests waited on are gone, so they are answered NOT_COORDINATOR now (the
   * clients look the coordinator up again and rejoin), as Kafka answers them when a shard unloads.
   */
  shardReloaded(onShard: (groupId: string) => boolean): void {
    for (const [token, p] of [...this.#parked]) {
      if (onShard(p.groupId)) this.#answerWithError(token, p.api, ErrorCode.NOT_COORDINATOR)
    }
  }
}
