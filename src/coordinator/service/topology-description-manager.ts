/**
 * KIP-1331 in the service layer (Kafka's StreamsGroupTopologyDescriptionManager plus the parts of
 * GroupCoordinatorService that call the plugin): heartbeat solicitation with the per-group back-off,
 * the push pipeline of StreamsGroupTopologyDescriptionUpdate, describe attachment, the DeleteGroups
 * pre-delete and the periodic cleanup cycle. Every plugin call happens here; every change of the
 * description epochs goes back to the shard as a named write (shard/topology-description.ts), and
 * every operation that may disturb the plugin's state writes the durable −2 barrier first, so a
 * failure (or a crash) between the plugin call and the bookkeeping write leaves the group at −2:
 * it solicits a push again and stays delete-eligible (#22777, kip1331-broker.md §9.4).
 */
import { channel } from 'node:diagnostics_channel'
import type { GuardedTopologyDescriptionPlugin, PluginFailure } from '../../plugin/guard.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { StreamsGroupDescribeResponseDescribedGroup } from '../../protocol/generated/messages/StreamsGroupDescribeResponse.js'
import type { StreamsGroupHeartbeatResponse } from '../../protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import type { StreamsGroupTopologyDescriptionUpdateRequest } from '../../protocol/generated/messages/StreamsGroupTopologyDescriptionUpdateRequest.js'
import type { RuntimeClock, TimerHandle } from '../runtime/clock.js'
import type { RuntimeLogger } from '../runtime/types.js'
import { ApiError } from '../../protocol/api-error.js'
import type { GroupCoordinatorShard } from '../shard/group-coordinator-shard.js'
import type { GroupCoordinatorResult } from '../shard/result.js'
import {
  type CleanupScan,
  finalizeStoredTopologyEpochAfterDeleteBatch,
  type HeartbeatGateInputs,
  isReliablyStoredTopologyEpoch,
  listStreamsGroupsNeedingTopologyCleanup,
  markTopologyUncertain,
  markTopologyUncertainAfterLostDescription,
  markTopologyUncertainBatch,
  setFailedTopologyEpoch,
  setStoredTopologyEpoch,
  streamsGroupsWithStoredTopologyDescription,
  type TopologyDescriptionError,
  TopologyDescriptionOp,
  validateTopologyDescriptionUpdate,
} from '../shard/topology-description.js'
import { type BackoffSettings, TopologyDescriptionBackoff } from './topology-description-backoff.js'
import { descriptionFromWire, descriptionToWire } from './topology-description-converter.js'

/** TopologyDescriptionStatus (protocol.md §6.5). */
export const TopologyDescriptionStatus = {
  NOT_REQUESTED: 0,
  NOT_STORED: 1,
  ERROR: 2,
  AVAILABLE: 3,
} as const

/** Messages of the push RPC (kip1331-broker.md §3.2), Kafka's texts. */
export const NO_PLUGIN_MESSAGE = 'The broker has no streams group topology description plugin configured.'
/** DeleteGroups' fallback ErrorMessage when the plugin's failure has no message (D1). */
export const DELETE_FAILED_MESSAGE = 'Topology description plugin failed to delete the topology.'

/** Kafka's eight sensors (kip1331-broker.md §1.7), by metric base name without the group prefix. */
export type TopologyDescriptionSensor =
  | 'streams-group-topology-description-cleanup-cycle'
  | 'streams-group-topology-description-cleanup-eligible'
  | 'streams-group-topology-description-delete-success'
  | 'streams-group-topology-description-delete-error'
  | 'streams-group-topology-description-set-success'
  | 'streams-group-topology-description-set-error'
  | 'streams-group-topology-description-get-success'
  | 'streams-group-topology-description-get-error'

export interface TopologyDescriptionSensors {
  /** Adds `value` to the sensor (Kafka's Meter records a sum). */
  record(sensor: TopologyDescriptionSensor, value: number): void
}

/**
 * Where the sensors are published by default: a diagnostics channel the server's metrics module
 * subscribes to (this folder may not import the server). Messages are `{ sensor, value }`.
 */
export const TOPOLOGY_DESCRIPTION_METRICS_CHANNEL = 'topograph:group-coordinator-metrics'

const metricsChannel = channel(TOPOLOGY_DESCRIPTION_METRICS_CHANNEL)

export const channelSensors: TopologyDescriptionSensors = {
  record(sensor, value) {
    if (metricsChannel.hasSubscribers) metricsChannel.publish({ sensor, value })
  },
}

/** What the manager needs from the service: named operations on the shard of a group or a shard. */
export interface TopologyDescriptionHost {
  readonly numShards: number
  shardFor(groupId: string): number
  write<T>(
    name: string,
    shardId: number,
    op: (shard: GroupCoordinatorShard) => GroupCoordinatorResult<T>,
  ): Promise<T>
  read<T>(name: string, shardId: number, op: (shard: GroupCoordinatorShard) => T): Promise<T>
  /** The Kafka error code for a failed operation (the service's translation point). */
  errorCode(err: unknown, operation: string): number
  /** False once the service started shutting down. */
  isActive(): boolean
}

export interface TopologyDescriptionManagerOptions {
  /** Null: no plugin configured (the feature is off). */
  readonly plugin: GuardedTopologyDescriptionPlugin | null
  readonly host: TopologyDescriptionHost
  readonly clock: RuntimeClock
  readonly logger: RuntimeLogger
  /** Uniform draws in [0, 1) for the back-off jitter. */
  readonly random: () => number
  readonly sensors?: TopologyDescriptionSensors
  /** `offsets.retention.check.interval.ms`: the cleanup cycle's period. */
  readonly cleanupIntervalMs: number
  /** Kafka's constants unless overridden (tests only; see docs/topology-descriptions.md). */
  readonly backoff?: BackoffSettings
}

/** The push's answer. */
export interface TopologyDescriptionUpdateResult {
  readonly errorCode: number
  readonly errorMessage: string | null
}

/** The per-group outcome of the DeleteGroups pre-delete for groups that must not be tombstoned. */
export type PreDeleteFailures = Map<string, TopologyDescriptionUpdateResult>

/** Errors after which the back-off is left alone (another coordinator, or this one, will answer). */
const COORDINATOR_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
])

const isBlank = (s: string | null | undefined): boolean => s !== null && s !== undefined && s.trim() === ''

export class TopologyDescriptionManager {
  readonly #plugin: GuardedTopologyDescriptionPlugin | null
  readonly #host: TopologyDescriptionHost
  readonly #clock: RuntimeClock
  readonly #log: RuntimeLogger
  readonly #sensors: TopologyDescriptionSensors
  readonly #cleanupIntervalMs: number
  readonly backoff: TopologyDescriptionBackoff
  #running = false
  #cycleTimer: TimerHandle | undefined
  #cycleInFlight: Promise<void> | null = null
  #closing: Promise<void> | null = null

  constructor(options: TopologyDescriptionManagerOptions) {
    this.#plugin = options.plugin
    this.#host = options.host
    this.#clock = options.clock
    this.#log = options.logger
    this.#sensors = options.sensors ?? channelSensors
    this.#cleanupIntervalMs = options.cleanupIntervalMs
    this.backoff = new TopologyDescriptionBackoff({
      settings: options.backoff,
      now: () => this.#clock.now(),
      random: options.random,
    })
  }

  get pluginConfigured(): boolean {
    return this.#plugin !== null
  }

  /** Topograph D3: a group that disappeared takes its back-off entries with it. */
  onGroupRemoved(groupId: string): void {
    this.backoff.clearGroup(groupId)
  }

  // ---- heartbeat solicitation (§2) ----

  /**
   * Sets TopologyDescriptionRequired on a committed heartbeat response when the gate allows it, in
   * Kafka's order: v1+, a plugin, member epoch ≥ 0 (not a leave), no error, a topology, neither the
   * stored nor the failed epoch equal to it, no STALE_TOPOLOGY status, then the back-off window.
   */
  maybeSetTopologyDescriptionRequired(
    groupId: string,
    requestVersion: number,
    requestMemberEpoch: number,
    response: StreamsGroupHeartbeatResponse,
    gate: HeartbeatGateInputs,
  ): void {
    if (requestVersion < 1 || this.#plugin === null || requestMemberEpoch < 0) return
    if (response.errorCode !== ErrorCode.NONE) return
    const current = gate.currentTopologyEpoch
    if (current < 0) return
    if (gate.storedDescriptionTopologyEpoch === current || gate.failedDescriptionTopologyEpoch === current)
      return
    // STALE_TOPOLOGY is status code 0.
    if (response.status?.some((s) => s.statusCode === 0)) return
    if (!this.backoff.armIfNotActive(groupId, current)) return
    response.topologyDescriptionRequired = true
    this.#log.info(
      { groupId, topologyEpoch: current },
      `[GroupId ${groupId}] Requested topology description push at topology epoch ${current}.`,
    )
  }

  // ---- push (§3.2) ----

  /** StreamsGroupTopologyDescriptionUpdate after the coordinator-active check. */
  async topologyDescriptionUpdate(
    request: StreamsGroupTopologyDescriptionUpdateRequest,
  ): Promise<TopologyDescriptionUpdateResult> {
    const plugin = this.#plugin
    if (plugin === null) return { errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: NO_PLUGIN_MESSAGE }
    if (isBlank(request.memberId)) return invalid("MemberId can't be empty.")
    if (isBlank(request.groupId)) return invalid("GroupId can't be empty.")
    if (request.topologyDescription === null || request.topologyDescription === undefined) {
      return invalid("TopologyDescription can't be null.")
    }
    const { groupId, memberId, topologyEpoch } = request
    const shardId = this.#host.shardFor(groupId)
    try {
      // 3. Validate.
      const invalidPush = await this.#host.read(TopologyDescriptionOp.VALIDATE, shardId, (shard) =>
        validateTopologyDescriptionUpdate(shard, groupId, memberId, topologyEpoch),
      )
      if (invalidPush !== null) return invalidPush
      // 4. Convert.
      let description: ReturnType<typeof descriptionFromWire>
      try {
        description = descriptionFromWire(request.topologyDescription)
      } catch (e) {
        if (e instanceof ApiError) return invalid(e.message)
        throw e
      }
      // 5. The durable −2 barrier before the plugin may change anything.
      const marked = await this.#host.write(TopologyDescriptionOp.MARK_UNCERTAIN, shardId, (shard) =>
        markTopologyUncertain(shard, groupId, true),
      )
      if (!marked)
        return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} not found.` }
      // 6. The plugin (Topograph D5: a configured timeout makes a hung call transient).
      const outcome = await plugin.setTopology(groupId, topologyEpoch, description)
      // 7. Sensors.
      this.#sensors.record(
        outcome.ok
          ? 'streams-group-topology-description-set-success'
          : 'streams-group-topology-description-set-error',
        1,
      )
      // 8. Outcome.
      if (!outcome.ok && outcome.kind === 'transient') {
        // Nothing written: the group stays at −2 and is asked again after the back-off.
        this.backoff.armOrExtend(groupId, topologyEpoch)
        return updateFailed(outcome)
      }
      const name = outcome.ok ? TopologyDescriptionOp.SET_STORED : TopologyDescriptionOp.SET_FAILED
      let written: TopologyDescriptionError | null
      try {
        written = await this.#host.write(name, shardId, (shard) =>
          outcome.ok
            ? setStoredTopologyEpoch(shard, groupId, topologyEpoch)
            : setFailedTopologyEpoch(shard, groupId, topologyEpoch),
        )
      } catch (e) {
        // The group stays at −2, so its next eligible heartbeat solicits the push again.
        const errorCode = this.#host.errorCode(e, name)
        if (!COORDINATOR_ERRORS.has(errorCode)) this.backoff.armOrExtend(groupId, topologyEpoch)
        return { errorCode, errorMessage: null }
      }
      if (written !== null) {
        if (written.errorCode === ErrorCode.GROUP_ID_NOT_FOUND) this.backoff.clearGroup(groupId)
        return written
      }
      this.backoff.clear(groupId, topologyEpoch)
      return outcome.ok ? { errorCode: ErrorCode.NONE, errorMessage: null } : updateFailed(outcome)
    } catch (e) {
      return { errorCode: this.#host.errorCode(e, TopologyDescriptionOp.UPDATE), errorMessage: null }
    }
  }

  // ---- describe (§4) ----

  /**
   * Fills TopologyDescription / TopologyDescriptionStatus of the described rows, each group on its
   * own and all in parallel. A row's ErrorCode is never changed here.
   */
  async attachTopologyDescriptions(
    rows: StreamsGroupDescribeResponseDescribedGroup[],
    storedEpochs: ReadonlyMap<string, number>,
  ): Promise<void> {
    const plugin = this.#plugin
    await Promise.all(
      rows.map(async (row) => {
        if (row.errorCode !== ErrorCode.NONE) return
        row.topologyDescription = null
        if (plugin === null || row.topology === null) {
          row.topologyDescriptionStatus = TopologyDescriptionStatus.NOT_STORED
          return
        }
        const topologyEpoch = row.topology.epoch
        const stored = storedEpochs.get(row.groupId)
        if (stored === undefined || !isReliablyStoredTopologyEpoch(stored) || stored !== topologyEpoch) {
          row.topologyDescriptionStatus = TopologyDescriptionStatus.NOT_STORED
          return
        }
        const outcome = await plugin.getTopology(row.groupId, topologyEpoch)
        if (!outcome.ok) {
          this.#sensors.record('streams-group-topology-description-get-error', 1)
          // Kafka logs rejections only (not synchronous throws); a timeout (D5) is logged like one.
          if (
            outcome.origin === 'rejected' ||
            outcome.origin === 'timeout' ||
            outcome.origin === 'invalid-result'
          ) {
            this.#log.warn(
              { groupId: row.groupId, err: outcome.cause, reason: outcome.message },
              `Topology description plugin getTopology failed for group ${row.groupId}.`,
            )
          }
          row.topologyDescriptionStatus = TopologyDescriptionStatus.ERROR
          return
        }
        if (outcome.value === null) {
          this.#sensors.record('streams-group-topology-description-get-success', 1)
          row.topologyDescriptionStatus = TopologyDescriptionStatus.NOT_STORED
          await this.#selfHealLostDescription(row.groupId, topologyEpoch)
          return
        }
        try {
          row.topologyDescription = descriptionToWire(outcome.value)
        } catch {
          this.#sensors.record('streams-group-topology-description-get-error', 1)
          row.topologyDescription = null
          row.topologyDescriptionStatus = TopologyDescriptionStatus.ERROR
          return
        }
        this.#sensors.record('streams-group-topology-description-get-success', 1)
        row.topologyDescriptionStatus = TopologyDescriptionStatus.AVAILABLE
      }),
    )
  }

  /**
   * Topograph D2 (Kafka 4.4 only answers NOT_STORED and keeps doing so until the topology epoch
   * changes): the plugin has nothing for the epoch the group believes stored, so log a WARN and write
   * stored := −2 if it still equals that epoch; the next eligible heartbeat solicits a push.
   */
  async #selfHealLostDescription(groupId: string, topologyEpoch: number): Promise<void> {
    this.#log.warn(
      { groupId, topologyEpoch },
      `[GroupId ${groupId}] Topology description plugin has no description for stored topology epoch ${topologyEpoch}; marking it uncertain so that the next heartbeat requests a push.`,
    )
    try {
      await this.#host.write(
        TopologyDescriptionOp.MARK_UNCERTAIN_AFTER_LOSS,
        this.#host.shardFor(groupId),
        (shard) => markTopologyUncertainAfterLostDescription(shard, groupId, topologyEpoch),
      )
    } catch (err) {
      this.#log.warn(
        { groupId, err },
        `[GroupId ${groupId}] Failed to mark the lost topology description uncertain; the next describe will retry.`,
      )
    }
  }

  // ---- DeleteGroups pre-delete (§5 step 2) ----

  /**
   * Removes the plugin data of the groups of one shard that are about to be tombstoned. Returns the
   * groups that must not be tombstoned, with their error. Any failure of this stage itself fails every
   * group passed to it with the mapped error.
   */
  async preDelete(shardId: number, groupIds: readonly string[]): Promise<PreDeleteFailures> {
    const failures: PreDeleteFailures = new Map()
    const plugin = this.#plugin
    if (plugin === null || groupIds.length === 0) return failures
    try {
      const candidates = await this.#host.read(TopologyDescriptionOp.PRE_DELETE, shardId, (shard) =>
        streamsGroupsWithStoredTopologyDescription(shard, groupIds),
      )
      if (candidates.length === 0) return failures
      const marked = await this.#host.write(TopologyDescriptionOp.MARK_UNCERTAIN_BATCH, shardId, (shard) =>
        markTopologyUncertainBatch(shard, candidates),
      )
      const { succeeded, failed } = await this.#deleteAll(plugin, marked)
      for (const [groupId, failure] of failed) {
        // Topograph D1: the plugin's own message (Kafka 4.4 always sends the fixed text).
        failures.set(groupId, {
          errorCode: ErrorCode.GROUP_DELETION_FAILED,
          errorMessage: deleteFailureMessage(failure),
        })
      }
      for (const g of succeeded) this.backoff.clearGroup(g)
      if (succeeded.length > 0) await this.#finalize(shardId, succeeded)
      return failures
    } catch (e) {
      const errorCode = this.#host.errorCode(e, TopologyDescriptionOp.PRE_DELETE)
      for (const g of groupIds) failures.set(g, { errorCode, errorMessage: null })
      return failures
    }
  }

  /** deleteTopology for every group in parallel, then the delete sensors. */
  async #deleteAll(
    plugin: GuardedTopologyDescriptionPlugin,
    groupIds: readonly string[],
  ): Promise<{ succeeded: string[]; failed: Map<string, PluginFailure> }> {
    const outcomes = await Promise.all(groupIds.map((g) => plugin.deleteTopology(g)))
    const succeeded: string[] = []
    const failed = new Map<string, PluginFailure>()
    outcomes.forEach((o, i) => {
      if (o.ok) succeeded.push(groupIds[i])
      else failed.set(groupIds[i], o)
    })
    if (succeeded.length > 0)
      this.#sensors.record('streams-group-topology-description-delete-success', succeeded.length)
    if (failed.size > 0) this.#sensors.record('streams-group-topology-description-delete-error', failed.size)
    return { succeeded, failed }
  }

  async #finalize(shardId: number, groupIds: readonly string[]): Promise<void> {
    try {
      await this.#host.write(TopologyDescriptionOp.FINALIZE_BATCH, shardId, (shard) =>
        finalizeStoredTopologyEpochAfterDeleteBatch(shard, groupIds),
      )
    } catch (err) {
      this.#log.warn(
        { groups: groupIds, partition: shardId, err },
        `Failed to finalize StoredDescriptionTopologyEpoch for groups [${groupIds.join(', ')}] on partition ${shardId}; the next cleanup cycle will retry.`,
      )
    }
  }

  // ---- classic JoinGroup to an empty streams group (§7) ----

  /** Kafka's isConversionDeleteThrottled: a conversion delete failed and its window is still open. */
  isConversionDeleteThrottled(groupId: string): boolean {
    return this.backoff.isActive(groupId, CONVERSION_THROTTLE_EPOCH)
  }

  /**
   * Kafka's throttleConversionDelete, after a failed conversion delete: arms the window under the
   * pseudo-epoch −2 unless one is active (an entry at a real epoch is replaced). Classic clients
   * retry REBALANCE_IN_PROGRESS at once, so without it every retry would call the plugin.
   */
  throttleConversionDelete(groupId: string): void {
    this.backoff.armIfNotActive(groupId, CONVERSION_THROTTLE_EPOCH)
  }

  /**
   * Kafka's cleanupTopologyBeforeConversion, run when the classic join deferred the conversion of an
   * empty streams group that may hold a stored description (stored ≠ −1):
   *
   * 1. a throttled group answers REBALANCE_IN_PROGRESS without calling the plugin;
   * 2. `mark-topology-uncertain` (markWhenNone false: empty, stored ≠ −1, at the latest state) writes
   *    the −2 barrier when stored is a real epoch; false (revived, converted, gone, cleared to −1) →
   *    REBALANCE_IN_PROGRESS;
   * 3. deleteTopology, then the delete sensors. A failure arms the conversion throttle and answers
   *    REBALANCE_IN_PROGRESS: the group stays a streams group at −2, which the cleanup cycle reclaims.
   *    A success clears the group's back-off.
   *
   * Resolves with the finalize step, which the caller runs after the re-join whatever it answered:
   * −2 → −1 if the re-join did not convert (a revived group), a real epoch → −2 if a push raced the
   * delete; nothing once the group is classic. Rejects with a {@link StreamsConversionError}.
   */
  async cleanupTopologyBeforeConversion(groupId: string): Promise<() => Promise<void>> {
    const plugin = this.#plugin
    const shardId = this.#host.shardFor(groupId)
    if (plugin === null) return async () => {}
    if (this.isConversionDeleteThrottled(groupId)) throw StreamsConversionError.retry('throttled')
    let marked: boolean
    try {
      marked = await this.#host.write(TopologyDescriptionOp.MARK_UNCERTAIN, shardId, (shard) =>
        markTopologyUncertain(shard, groupId, false),
      )
    } catch (e) {
      throw new StreamsConversionError(
        this.#host.errorCode(e, TopologyDescriptionOp.MARK_UNCERTAIN),
        false,
        e,
      )
    }
    if (!marked) throw StreamsConversionError.retry('not eligible')
    const { failed } = await this.#deleteAll(plugin, [groupId])
    if (failed.size > 0) {
      this.throttleConversionDelete(groupId)
      throw StreamsConversionError.retry(failed.get(groupId)?.message ?? 'delete failed')
    }
    this.backoff.clearGroup(groupId)
    return () => this.#finalize(shardId, [groupId])
  }

  // ---- periodic cleanup (§6) ----

  /** Starts the cycle (first run one interval from now). A no-op without a plugin. */
  startCleanupCycle(): void {
    if (this.#plugin === null) return
    if (this.#running) {
      this.#log.warn({}, 'Topology-description cleanup cycle is already started.')
      return
    }
    this.#running = true
    this.#scheduleTick()
  }

  #scheduleTick(): void {
    this.#cycleTimer = this.#clock.setTimer(() => {
      this.#cycleTimer = undefined
      if (!this.#running) return
      try {
        this.#tick()
      } catch (err) {
        this.#log.warn({ err }, 'Unexpected error running topology-description cleanup cycle.')
      }
      if (this.#running) this.#scheduleTick()
    }, this.#cleanupIntervalMs)
  }

  #tick(): void {
    if (this.#cycleInFlight !== null) {
      this.#log.warn({}, 'Topology-description cleanup cycle skipped: previous cycle is still in flight.')
      return
    }
    this.runCleanupCycle()
  }

  /**
   * One cleanup cycle now (single flight: while one runs, this returns the running one). Resolves
   * once every shard's batch settled; never rejects.
   */
  runCleanupCycle(): Promise<void> {
    if (this.#cycleInFlight !== null) return this.#cycleInFlight
    let cycle: Promise<void>
    try {
      cycle = this.#runOnce()
    } catch (err) {
      cycle = Promise.reject(err)
    }
    const tracked = cycle
      .catch((err: unknown) => {
        this.#log.warn({ err }, 'Topology-description cleanup cycle failed to complete cleanly.')
      })
      .finally(() => {
        this.#cycleInFlight = null
      })
    this.#cycleInFlight = tracked
    return tracked
  }

  async #runOnce(): Promise<void> {
    const plugin = this.#plugin
    if (plugin === null) return
    this.#sensors.record('streams-group-topology-description-cleanup-cycle', 1)
    await Promise.all(
      Array.from({ length: this.#host.numShards }, (_, shardId) => this.#cleanupShard(plugin, shardId)),
    )
  }

  async #cleanupShard(plugin: GuardedTopologyDescriptionPlugin, shardId: number): Promise<void> {
    let scan: CleanupScan
    try {
      scan = await this.#host.read(TopologyDescriptionOp.LIST_CLEANUP, shardId, (shard) =>
        listStreamsGroupsNeedingTopologyCleanup(shard),
      )
    } catch (err) {
      this.#log.warn(
        { partition: shardId, err },
        'Topology-description cleanup read failed for one partition.',
      )
      return
    }
    for (const { groupId, error } of scan.failed) {
      this.#log.warn(
        { groupId, err: error },
        `Unexpected error scanning streams group ${groupId} for topology cleanup; skipping.`,
      )
    }
    const eligible = scan.eligible
    if (eligible.length === 0 || !this.#host.isActive()) return
    this.#sensors.record('streams-group-topology-description-cleanup-eligible', eligible.length)
    let marked: string[]
    try {
      // Emptiness is checked again here, at the latest state.
      marked = await this.#host.write(TopologyDescriptionOp.MARK_UNCERTAIN_BATCH, shardId, (shard) =>
        markTopologyUncertainBatch(shard, eligible),
      )
    } catch (err) {
      this.#log.warn(
        { groups: eligible, partition: shardId, err },
        `Failed to write the UNCERTAIN barrier for groups [${eligible.join(', ')}] on partition ${shardId}; skipping their plugin delete — the next cleanup cycle will retry.`,
      )
      return
    }
    if (marked.length === 0) return
    const { succeeded } = await this.#deleteAll(plugin, marked)
    if (!this.#host.isActive()) return
    for (const g of succeeded) this.backoff.clearGroup(g)
    // Failed groups stay at −2: still eligible next cycle, still soliciting a push.
    if (succeeded.length > 0) await this.#finalize(shardId, succeeded)
  }

  // ---- shutdown ----

  /** Stops the cycle, waits for a running one, then closes the plugin (once). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#running = false
      if (this.#cycleTimer !== undefined) this.#clock.clearTimer(this.#cycleTimer)
      this.#cycleTimer = undefined
      if (this.#cycleInFlight !== null) await this.#cycleInFlight
      if (this.#plugin !== null) {
        const closed = await this.#plugin.close()
        if (!closed.ok) {
          this.#log.warn(
            { err: closed.cause, reason: closed.message },
            'Topology description plugin failed to close.',
          )
        }
      }
    })()
    return this.#closing
  }
}

/** The pseudo-epoch the conversion-delete throttle is kept under (Kafka: −2). */
export const CONVERSION_THROTTLE_EPOCH = -2

/**
 * Why the cleanup before a streams → classic conversion did not let the join convert. With
 * `echoMemberId` the join answers `errorCode` (REBALANCE_IN_PROGRESS) with the request's member id, so
 * the client retries; without it an operation failed and only the translated code is answered.
 */
export class StreamsConversionError extends ApiError {
  override name = 'StreamsConversionError'
  readonly echoMemberId: boolean
  constructor(errorCode: number, echoMemberId: boolean, cause?: unknown) {
    super(errorCode, null, { cause })
    this.echoMemberId = echoMemberId
  }

  static retry(reason: string): StreamsConversionError {
    return new StreamsConversionError(ErrorCode.REBALANCE_IN_PROGRESS, true, reason)
  }
}

function invalid(message: string): TopologyDescriptionUpdateResult {
  return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: message }
}

/**
 * Topograph D1: DeleteGroups reports what the plugin said (its error's message, also for a
 * synchronous throw, or the D5 timeout text); Kafka's fixed text only when the plugin said nothing.
 */
function deleteFailureMessage(failure: PluginFailure): string {
  if (failure.origin === 'rejected' || failure.origin === 'sync-throw') {
    const cause = failure.cause
    if (typeof cause === 'string' && cause !== '') return cause
    if (cause instanceof Error && cause.message !== '') return cause.message
    return DELETE_FAILED_MESSAGE
  }
  return failure.message ?? DELETE_FAILED_MESSAGE
}

function updateFailed(outcome: PluginFailure): TopologyDescriptionUpdateResult {
  return { errorCode: ErrorCode.STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED, errorMessage: outcome.message }
}
