/**
 * A streams group member: the StreamsGroupHeartbeat membership loop (join at epoch 0 with the
 * topology, heartbeat at the broker's interval, reconcile the assignment revoke-before-assign,
 * rejoin after fencing, leave on close) that also drives the KIP-1331 topology push manager.
 * Behaviour follows Kafka's StreamsGroupHeartbeatRequestManager and StreamsMembershipManager.
 */
import { randomUUID } from 'node:crypto'
import { randomUuid } from '../../uuid.js'
import { EventEmitter } from 'node:events'
import type {
  StreamsGroupHeartbeatRequest,
  StreamsGroupHeartbeatRequestTaskIds,
} from '../../protocol/generated/messages/StreamsGroupHeartbeatRequest.js'
import type {
  StreamsGroupHeartbeatResponse,
  StreamsGroupHeartbeatResponseEndpointToPartitions,
  StreamsGroupHeartbeatResponseTaskIds,
} from '../../protocol/generated/messages/StreamsGroupHeartbeatResponse.js'
import { errorName } from '../../protocol/errors.js'
import { ExponentialBackoff } from '../network/backoff.js'
import { NetworkClient } from '../network/client.js'
import { ClientClosedError, DisconnectError, KafkaError, kafkaErrorFromCode } from '../network/errors.js'
import { type Logger, silentLogger } from '../network/logger.js'
import { pickSecurityOptions, type SecurityOptions } from '../network/security.js'
import { TopologyPushManager } from './push-manager.js'
import type { Topology } from './topology.js'
import { heartbeatTopology, internalTopicDecorator, topologyDescriptionToWire } from './wire.js'

const STREAMS_GROUP_HEARTBEAT = 88
const STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE = 93
const LEAVE_GROUP_EPOCH = -1
const LEAVE_GROUP_STATIC_EPOCH = -2

/** Tasks of one subtopology. */
export interface TaskIds {
  readonly subtopologyId: string
  readonly partitions: readonly number[]
}

/** The three task sets of a member (sorted by subtopology id, partitions ascending). */
export interface StreamsTasks {
  readonly activeTasks: readonly TaskIds[]
  readonly standbyTasks: readonly TaskIds[]
  readonly warmupTasks: readonly TaskIds[]
}

/** Heartbeat response status codes (StreamsGroupHeartbeatResponse.Status). */
export const StreamsGroupStatusCode = {
  STALE_TOPOLOGY: 0,
  MISSING_SOURCE_TOPICS: 1,
  INCORRECTLY_PARTITIONED_TOPICS: 2,
  MISSING_INTERNAL_TOPICS: 3,
  SHUTDOWN_APPLICATION: 4,
  ASSIGNMENT_DELAYED: 5,
  MISSING_CLIENT_TAGS: 6,
} as const

export interface StreamsGroupStatus {
  readonly statusCode: number
  /** Kafka's name for the code, or `UNKNOWN(<code>)` */
  readonly statusName: string
  readonly statusDetail: string
}

export type StreamsMemberState =
  | 'UNSUBSCRIBED'
  | 'JOINING'
  | 'STABLE'
  | 'RECONCILING'
  | 'FENCED'
  | 'LEAVING'
  | 'FATAL'
  | 'CLOSED'

/** Security: Kafka's keys (`security.protocol`, `sasl.*`, `ssl.*`) or `securityProtocol`/`ssl`/`sasl`. */
export interface StreamsMemberOptions extends SecurityOptions {
  /** `host:port` list, as a comma-separated string or an array */
  readonly bootstrapServers: string | readonly string[]
  /** application.id, which is the group id */
  readonly applicationId: string
  readonly topology: Topology
  /** the Kafka Streams process id; a random UUID by default */
  readonly processId?: string
  /** group.instance.id: makes the member static (close() leaves with epoch -2) */
  readonly instanceId?: string
  readonly rackId?: string
  /** application.server, for interactive queries */
  readonly userEndpoint?: { readonly host: string; readonly port: number }
  /** client.tag.* */
  readonly clientTags?: Readonly<Record<string, string>>
  /** max.poll.interval.ms in Kafka Streams (300000) */
  readonly rebalanceTimeoutMs?: number
  /** topology epoch sent when joining (Kafka's client always uses 0) */
  readonly topologyEpoch?: number
  /** replication.factor for internal topics (-1 = broker default) */
  readonly replicationFactor?: number
  /**
   * Kafka Streams' `topic.*` configs, without the prefix: configs of every internal topic, over
   * the library's defaults and under a store's `logConfig`
   */
  readonly topicConfigs?: Readonly<Record<string, string>>
  readonly clientId?: string
  readonly requestTimeoutMs?: number
  /** retry.backoff.ms (100) */
  readonly retryBackoffMs?: number
  /** retry.backoff.max.ms (1000) */
  readonly retryBackoffMaxMs?: number
  readonly logger?: Logger
  /** Kafka Streams' `topology.description.push.enabled` (default true) */
  readonly 'topology.description.push.enabled'?: boolean
  /** the member now owns `assignment` (the full set); called after every change and after each join */
  readonly onTasksAssigned?: (assignment: StreamsTasks) => void | Promise<void>
  /** `revoked` are no longer owned; called before the smaller set is acknowledged */
  readonly onTasksRevoked?: (revoked: StreamsTasks) => void | Promise<void>
  /** the member was fenced and lost `lost`; defaults to onTasksRevoked */
  readonly onTasksLost?: (lost: StreamsTasks) => void | Promise<void>
  /** a fatal error stopped the member */
  readonly onError?: (error: KafkaError) => void
}

type TaskSet = Map<string, Set<number>>
interface OwnedTasks {
  active: TaskSet
  standby: TaskSet
  warmup: TaskSet
}

const STATUS_NAMES = Object.fromEntries(
  Object.entries(StreamsGroupStatusCode).map(([name, code]) => [code, name]),
) as Record<number, string>

const emptyTasks = (): OwnedTasks => ({ active: new Map(), standby: new Map(), warmup: new Map() })

function fromWire(list: readonly StreamsGroupHeartbeatResponseTaskIds[]): TaskSet {
  const out: TaskSet = new Map()
  for (const t of list) {
    const s = out.get(t.subtopologyId) ?? new Set<number>()
    for (const p of t.partitions) s.add(p)
    if (s.size > 0) out.set(t.subtopologyId, s)
  }
  return out
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

function toList(set: TaskSet): StreamsGroupHeartbeatRequestTaskIds[] {
  return [...set]
    .filter(([, ps]) => ps.size > 0)
    .sort(([a], [b]) => byCodeUnits(a, b))
    .map(([subtopologyId, ps]) => ({ subtopologyId, partitions: [...ps].sort((x, y) => x - y) }))
}

function minus(a: TaskSet, b: TaskSet): TaskSet {
  const out: TaskSet = new Map()
  for (const [id, ps] of a) {
    const other = b.get(id)
    const left = new Set([...ps].filter((p) => other === undefined || !other.has(p)))
    if (left.size > 0) out.set(id, left)
  }
  return out
}

const size = (s: TaskSet): number => [...s.values()].reduce((n, ps) => n + ps.size, 0)
const countAll = (t: OwnedTasks): number => size(t.active) + size(t.standby) + size(t.warmup)

function publicTasks(t: OwnedTasks): StreamsTasks {
  return { activeTasks: toList(t.active), standbyTasks: toList(t.standby), warmupTasks: toList(t.warmup) }
}

/** A canonical text of the three sets, to tell whether they changed since the last send. */
function tasksKey(t: OwnedTasks): string {
  return JSON.stringify([toList(t.active), toList(t.standby), toList(t.warmup)])
}

/**
 * One member of a streams group. Events: `'status'` (statuses: readonly StreamsGroupStatus[]) when
 * the heartbeat status list changes, `'state'` (state: StreamsMemberState) on every transition.
 */
export class StreamsMember extends EventEmitter {
  readonly #o: StreamsMemberOptions
  readonly #log: Logger
  readonly #client: NetworkClient
  readonly #push: TopologyPushManager
  readonly #backoff: ExponentialBackoff
  readonly #groupId: string
  readonly #processId: string
  #memberId: string
  #memberEpoch = 0
  #state: StreamsMemberState = 'UNSUBSCRIBED'
  #heartbeatIntervalMs = 0
  #nextHeartbeatAt = 0
  #heartbeatInFlight: Promise<void> | null = null
  #heartbeatVersion: number | null = null
  #retryAttempts = 0
  #timer: NodeJS.Timeout | null = null
  #owned: OwnedTasks = emptyTasks()
  #target: OwnedTasks | null = null
  /** the task lists last sent; null = send them on the next heartbeat */
  #lastSentTasks: string | null = null
  /** set by a join response: onTasksAssigned runs even when nothing changed */
  #announceAssignment = false
  #callbacks: Promise<void> = Promise.resolve()
  #reconciling = false
  #statusKey = '[]'
  #statuses: readonly StreamsGroupStatus[] = []
  #endpointInformationEpoch = -1
  #partitionsByUserEndpoint: readonly StreamsGroupHeartbeatResponseEndpointToPartitions[] = []
  #started: { resolve: () => void; reject: (e: unknown) => void } | null = null
  #closing: Promise<void> | null = null

  constructor(o: StreamsMemberOptions) {
    super()
    if (o.applicationId.trim() === '')
      throw new KafkaError('applicationId must be non-empty', { errorName: 'CONFIG' })
    this.#o = o
    this.#log = o.logger ?? silentLogger
    this.#groupId = o.applicationId
    this.#memberId = randomUuid()
    this.#processId = o.processId ?? randomUUID()
    this.#client = new NetworkClient({
      bootstrapServers: o.bootstrapServers,
      clientId: o.clientId,
      requestTimeoutMs: o.requestTimeoutMs,
      retryBackoffMs: o.retryBackoffMs,
      retryBackoffMaxMs: o.retryBackoffMaxMs,
      logger: this.#log,
      ...pickSecurityOptions(o),
    })
    this.#backoff = new ExponentialBackoff({
      initialMs: o.retryBackoffMs ?? 100,
      maxMs: o.retryBackoffMaxMs ?? 1000,
    })
    const pushEnabled = o['topology.description.push.enabled'] ?? true
    this.#push = new TopologyPushManager({
      groupId: this.#groupId,
      wireDescription: pushEnabled
        ? topologyDescriptionToWire(o.topology.describe(), internalTopicDecorator(o.topology, this.#groupId))
        : null,
      memberId: () => this.#memberId,
      topologyEpoch: () => o.topologyEpoch ?? 0,
      coordinatorKnown: () => this.#client.cachedCoordinator(this.#groupId) !== undefined,
      markCoordinatorUnknown: () => this.#client.markCoordinatorUnknown(this.#groupId),
      onDisconnect: () => this.#client.markCoordinatorUnknown(this.#groupId),
      send: async (req) => {
        const node = this.#client.cachedCoordinator(this.#groupId)
        if (node === undefined) throw new DisconnectError('The coordinator is not known')
        return this.#client.sendTo(node, STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE, req)
      },
      retryBackoffMs: o.retryBackoffMs,
      retryBackoffMaxMs: o.retryBackoffMaxMs,
      logger: this.#log,
      ...pickSecurityOptions(o),
    })
  }

  get memberId(): string {
    return this.#memberId
  }

  get memberEpoch(): number {
    return this.#memberEpoch
  }

  get groupId(): string {
    return this.#groupId
  }

  get processId(): string {
    return this.#processId
  }

  get state(): StreamsMemberState {
    return this.#state
  }

  /** The StreamsGroupHeartbeat version of the last request (null before the first one). */
  get heartbeatVersion(): number | null {
    return this.#heartbeatVersion
  }

  /** The broker's HeartbeatIntervalMs from the last successful response. */
  get heartbeatIntervalMs(): number {
    return this.#heartbeatIntervalMs
  }

  /** The statuses of the last successful heartbeat response. */
  get statuses(): readonly StreamsGroupStatus[] {
    return this.#statuses
  }

  /** Interactive-query endpoints from the last response that carried them. */
  get partitionsByUserEndpoint(): readonly StreamsGroupHeartbeatResponseEndpointToPartitions[] {
    return this.#partitionsByUserEndpoint
  }

  /** The push manager this member drives (read its `pushRequired` / `inFlight`). */
  get pushManager(): TopologyPushManager {
    return this.#push
  }

  /** The tasks the member owns now. */
  tasks(): StreamsTasks {
    return publicTasks(this.#owned)
  }

  /**
   * Starts the heartbeat loop. Resolves after the first successful join response; rejects with the
   * fatal error if one stops the member first, or when the member is closed before it joins.
   */
  start(): Promise<void> {
    if (this.#state !== 'UNSUBSCRIBED')
      return Promise.reject(new KafkaError('The member was already started'))
    return new Promise<void>((resolve, reject) => {
      this.#started = { resolve, reject }
      this.#transition('JOINING')
      this.#nextHeartbeatAt = 0
      this.#schedule(0)
    })
  }

  /**
   * Leaves the group (epoch -1, or -2 for a static member so its tasks wait for it) after
   * revoking every owned task, then closes the connections. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#doClose()
    return this.#closing
  }

  async #doClose(): Promise<void> {
    const wasRunning = this.#state !== 'UNSUBSCRIBED' && this.#state !== 'FATAL'
    this.#clearTimer()
    const joinedEpoch = this.#memberEpoch
    this.#transition('LEAVING')
    // A heartbeat still in flight is not awaited: its answer is ignored from now on, and the leave
    // request queues behind it on the same connection.
    await this.#callbacks
    if (wasRunning && joinedEpoch > 0) {
      const revoked = this.#owned
      this.#owned = emptyTasks()
      this.#target = null
      if (countAll(revoked) > 0) await this.#invoke('onTasksRevoked', revoked)
      const epoch = this.#o.instanceId === undefined ? LEAVE_GROUP_EPOCH : LEAVE_GROUP_STATIC_EPOCH
      this.#log.info?.(
        { groupId: this.#groupId, memberId: this.#memberId, memberEpoch: epoch },
        `Member ${this.#memberId} sending leave group heartbeat with epoch ${epoch}`,
      )
      try {
        const res = await this.#send(this.#leaveRequest(epoch))
        if (res.errorCode !== 0) {
          this.#log.warn?.(
            { groupId: this.#groupId, memberId: this.#memberId, error: errorName(res.errorCode) },
            `Leave group heartbeat failed with ${errorName(res.errorCode)}: ${res.errorMessage}`,
          )
        }
      } catch (e) {
        this.#log.warn?.({ groupId: this.#groupId, err: e }, 'Leave group heartbeat failed')
      }
      this.#memberEpoch = epoch
    }
    // Closing the connections fails a push still waiting for its answer.
    await this.#client.close()
    await this.#push.inFlight?.catch(() => undefined)
    this.#transition('CLOSED')
    this.#started?.reject(new ClientClosedError('The member was closed before it joined the group.'))
    this.#started = null
  }

  // --- loop ---------------------------------------------------------------------------------

  #clearTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
  }

  #running(): boolean {
    return this.#state === 'JOINING' || this.#state === 'STABLE' || this.#state === 'RECONCILING'
  }

  #schedule(delayMs: number): void {
    this.#clearTimer()
    if (!this.#running() && this.#state !== 'FENCED') return
    // setTimeout treats anything above 2^31-1 (and Infinity) as 1 ms.
    this.#timer = setTimeout(() => this.#tick(), Math.min(Math.max(0, delayMs), 2 ** 31 - 1))
  }

  #tick(): void {
    this.#timer = null
    if (!this.#running()) return
    const now = Date.now()
    if (this.#heartbeatInFlight === null && now >= this.#nextHeartbeatAt) this.#heartbeat()
    if (this.#push.poll(now)) {
      void this.#push.inFlight?.then(() => this.#reschedule())
    }
    this.#reschedule()
  }

  #reschedule(): void {
    if (!this.#running()) return
    const now = Date.now()
    let wait = this.#push.maximumTimeToWait(now)
    if (this.#heartbeatInFlight === null) wait = Math.min(wait, this.#nextHeartbeatAt - now)
    if (wait === Number.POSITIVE_INFINITY) {
      // Nothing due: the in-flight heartbeat reschedules when it completes.
      this.#clearTimer()
      return
    }
    this.#schedule(wait)
  }

  /** Sends to the coordinator, discovering it first when it is not known. */
  async #send(req: StreamsGroupHeartbeatRequest): Promise<StreamsGroupHeartbeatResponse> {
    const node = await this.#client.findCoordinator(this.#groupId)
    const conn = await this.#client.connect(node.host, node.port)
    // v1 when the broker has it (TopologyDescriptionRequired), else v0; the bodies are the same.
    const version = conn.negotiateVersion(STREAMS_GROUP_HEARTBEAT)
    this.#heartbeatVersion = version
    return conn.send(STREAMS_GROUP_HEARTBEAT, req, { version })
  }

  #heartbeat(): void {
    const req = this.#heartbeatRequest()
    const sentEpoch = req.memberEpoch
    this.#heartbeatInFlight = this.#send(req)
      .then(
        (res) => this.#onResponse(res, sentEpoch),
        (e: unknown) => this.#onException(e),
      )
      .catch((e: unknown) => {
        this.#log.error?.({ groupId: this.#groupId, err: e }, 'Unexpected failure handling a heartbeat')
      })
      .finally(() => {
        this.#heartbeatInFlight = null
        this.#reschedule()
      })
  }

  #baseRequest(epoch: number): StreamsGroupHeartbeatRequest {
    return {
      groupId: this.#groupId,
      memberId: this.#memberId,
      memberEpoch: epoch,
      endpointInformationEpoch: this.#endpointInformationEpoch,
      instanceId: this.#o.instanceId ?? null,
      rackId: null,
      rebalanceTimeoutMs: -1,
      topology: null,
      activeTasks: null,
      standbyTasks: null,
      warmupTasks: null,
      processId: null,
      userEndpoint: null,
      clientTags: null,
      taskOffsets: null,
      taskEndOffsets: null,
      shutdownApplication: false,
    }
  }

  #leaveRequest(epoch: number): StreamsGroupHeartbeatRequest {
    return this.#baseRequest(epoch)
  }

  #heartbeatRequest(): StreamsGroupHeartbeatRequest {
    const req = this.#baseRequest(this.#memberEpoch)
    if (this.#memberEpoch === 0) {
      const o = this.#o
      req.rackId = o.rackId ?? null
      req.rebalanceTimeoutMs = o.rebalanceTimeoutMs ?? 300_000
      req.topology = heartbeatTopology(o.topology, {
        applicationId: this.#groupId,
        epoch: o.topologyEpoch,
        replicationFactor: o.replicationFactor,
        topicConfigs: o.topicConfigs,
      })
      req.processId = this.#processId
      req.userEndpoint =
        o.userEndpoint === undefined ? null : { host: o.userEndpoint.host, port: o.userEndpoint.port }
      req.clientTags = Object.entries(o.clientTags ?? {})
        .sort(([a], [b]) => byCodeUnits(a, b))
        .map(([key, value]) => ({ key, value }))
      // A (re)join always reports empty task lists.
      req.activeTasks = []
      req.standbyTasks = []
      req.warmupTasks = []
      this.#lastSentTasks = tasksKey(emptyTasks())
      return req
    }
    // The task lists only when they changed since the last heartbeat (null = unchanged).
    const key = tasksKey(this.#owned)
    if (key !== this.#lastSentTasks) {
      req.activeTasks = toList(this.#owned.active)
      req.standbyTasks = toList(this.#owned.standby)
      req.warmupTasks = toList(this.#owned.warmup)
      this.#lastSentTasks = key
    }
    return req
  }

  // --- responses ------------------------------------------------------------------------------

  #onException(e: unknown): void {
    if (!this.#running()) return
    const err = e instanceof KafkaError ? e : new KafkaError(String(e), { cause: e })
    this.#lastSentTasks = null
    if (err.retriable) {
      this.#client.markCoordinatorUnknown(this.#groupId)
      this.#retryLater(`StreamsGroupHeartbeat request failed: ${err.message}`)
      return
    }
    this.#fatal(err)
  }

  #retryLater(message: string): void {
    const wait = this.#backoff.backoff(this.#retryAttempts++)
    this.#nextHeartbeatAt = Date.now() + wait
    this.#log.info?.(
      { groupId: this.#groupId, memberId: this.#memberId, backoffMs: wait },
      `${message}; retrying`,
    )
  }

  #onResponse(res: StreamsGroupHeartbeatResponse, sentEpoch: number): void {
    if (!this.#running()) return
    const ctx = { groupId: this.#groupId, memberId: this.#memberId, memberEpoch: this.#memberEpoch }
    const code = res.errorCode
    if (code !== 0) {
      this.#lastSentTasks = null
      const name = errorName(code)
      const msg = res.errorMessage
      switch (code) {
        case 15: // COORDINATOR_NOT_AVAILABLE
        case 16: // NOT_COORDINATOR
          this.#client.markCoordinatorUnknown(this.#groupId)
          this.#retryLater(
            `StreamsGroupHeartbeat failed with ${name}: ${msg}. Will rediscover the coordinator`,
          )
          return
        case 14: // COORDINATOR_LOAD_IN_PROGRESS
          this.#retryLater(`StreamsGroupHeartbeat failed with ${name}: ${msg}. The coordinator is loading`)
          return
        case 110: // FENCED_MEMBER_EPOCH
        case 25: // UNKNOWN_MEMBER_ID
          this.#log.info?.(ctx, `StreamsGroupHeartbeat failed with ${name}: ${msg}. Rejoining with epoch 0`)
          this.#fenced(sentEpoch)
          return
        default:
          this.#fatal(kafkaErrorFromCode(code, msg))
          return
      }
    }
    this.#retryAttempts = 0
    if (res.memberId !== '') this.#memberId = res.memberId
    this.#memberEpoch = res.memberEpoch
    this.#heartbeatIntervalMs = res.heartbeatIntervalMs
    this.#nextHeartbeatAt = Date.now() + Math.max(res.heartbeatIntervalMs, res.throttleTimeMs)
    this.#endpointInformationEpoch = res.endpointInformationEpoch
    if (res.partitionsByUserEndpoint !== null) this.#partitionsByUserEndpoint = res.partitionsByUserEndpoint
    this.#onStatuses(res)
    this.#push.onHeartbeatResponse(res.topologyDescriptionRequired)
    if (sentEpoch === 0) this.#announceAssignment = true
    if (res.activeTasks !== null && res.standbyTasks !== null && res.warmupTasks !== null) {
      this.#target = {
        active: fromWire(res.activeTasks),
        standby: fromWire(res.standbyTasks),
        warmup: fromWire(res.warmupTasks),
      }
    }
    if (this.#state === 'JOINING') this.#transition('STABLE')
    this.#maybeReconcile()
    if (this.#started !== null) {
      this.#started.resolve()
      this.#started = null
    }
  }

  #onStatuses(res: StreamsGroupHeartbeatResponse): void {
    const statuses = (res.status ?? []).map((s) => ({
      statusCode: s.statusCode,
      statusName: STATUS_NAMES[s.statusCode] ?? `UNKNOWN(${s.statusCode})`,
      statusDetail: s.statusDetail,
    }))
    const key = JSON.stringify(statuses)
    this.#statuses = statuses
    // Logged and emitted when the list changes, not on every heartbeat.
    if (key === this.#statusKey) return
    this.#statusKey = key
    if (statuses.length > 0) {
      const text = statuses.map((s) => `(${s.statusCode}) ${s.statusDetail}`).join(', ')
      this.#log.warn?.(
        { groupId: this.#groupId, memberId: this.#memberId, statuses: statuses.map((s) => s.statusName) },
        `Membership is in the following statuses: ${text}`,
      )
    }
    this.emit('status', statuses)
  }

  #fenced(sentEpoch: number): void {
    this.#transition('FENCED')
    this.#push.clear()
    this.#target = null
    this.#clearTimer()
    this.#callbacks = this.#callbacks.then(async () => {
      // Read after any running reconciliation has stopped, so nothing it handed out is missed.
      const lost = this.#owned
      this.#owned = emptyTasks()
      if (countAll(lost) > 0) {
        await this.#invoke(this.#o.onTasksLost === undefined ? 'onTasksRevoked' : 'onTasksLost', lost)
      }
      if (this.#state !== 'FENCED') return
      this.#log.info?.(
        { groupId: this.#groupId, memberId: this.#memberId, memberEpoch: sentEpoch },
        `Member ${this.#memberId} with epoch ${sentEpoch} rejoining the group with epoch 0`,
      )
      this.#memberEpoch = 0
      this.#lastSentTasks = null
      this.#nextHeartbeatAt = 0
      this.#transition('JOINING')
      this.#reschedule()
    })
  }

  #fatal(err: KafkaError): void {
    this.#log.error?.(
      { groupId: this.#groupId, memberId: this.#memberId, error: err.errorName },
      `StreamsGroupHeartbeat failed with a fatal error ${err.errorName}: ${err.message}`,
    )
    this.#transition('FATAL')
    this.#clearTimer()
    try {
      this.#o.onError?.(err)
    } catch (e) {
      this.#log.error?.({ groupId: this.#groupId, err: e }, 'onError threw')
    }
    if (this.#started !== null) {
      this.#started.reject(err)
      this.#started = null
    }
  }

  // --- reconciliation -------------------------------------------------------------------------

  /** Applies the latest target: revoke first, then assign, then acknowledge at once. */
  #maybeReconcile(): void {
    if (this.#reconciling) return
    const target = this.#target
    if (target === null && !this.#announceAssignment) return
    this.#reconciling = true
    this.#callbacks = this.#callbacks
      .then(async () => {
        while (this.#running()) {
          const t = this.#target ?? this.#owned
          this.#target = null
          const revoked: OwnedTasks = {
            active: minus(this.#owned.active, t.active),
            standby: minus(this.#owned.standby, t.standby),
            warmup: minus(this.#owned.warmup, t.warmup),
          }
          const added = countAll({
            active: minus(t.active, this.#owned.active),
            standby: minus(t.standby, this.#owned.standby),
            warmup: minus(t.warmup, this.#owned.warmup),
          })
          const changed = countAll(revoked) > 0 || added > 0
          if (!changed && !this.#announceAssignment) break
          this.#announceAssignment = false
          this.#transition('RECONCILING')
          if (countAll(revoked) > 0) {
            this.#owned = {
              active: minus(this.#owned.active, revoked.active),
              standby: minus(this.#owned.standby, revoked.standby),
              warmup: minus(this.#owned.warmup, revoked.warmup),
            }
            await this.#invoke('onTasksRevoked', revoked)
          }
          if (!this.#running()) break
          this.#owned = t
          await this.#invoke('onTasksAssigned', t)
          this.#log.info?.(
            {
              groupId: this.#groupId,
              memberId: this.#memberId,
              memberEpoch: this.#memberEpoch,
              assignment: publicTasks(t),
            },
            'Reconciliation completed',
          )
          if (changed && this.#running()) {
            // Acknowledge the new owned set with the next heartbeat, right away.
            this.#nextHeartbeatAt = 0
          }
          if (this.#target === null) break
        }
      })
      .finally(() => {
        this.#reconciling = false
        if (this.#state === 'RECONCILING') this.#transition('STABLE')
        if (this.#target !== null && this.#running()) this.#maybeReconcile()
        this.#reschedule()
      })
  }

  async #invoke(
    name: 'onTasksAssigned' | 'onTasksRevoked' | 'onTasksLost',
    tasks: OwnedTasks,
  ): Promise<void> {
    const fn = this.#o[name]
    if (fn === undefined) return
    try {
      await fn(publicTasks(tasks))
    } catch (e) {
      this.#log.error?.({ groupId: this.#groupId, memberId: this.#memberId, err: e }, `${name} threw`)
    }
  }

  #transition(next: StreamsMemberState): void {
    if (this.#state === next) return
    this.#state = next
    this.emit('state', next)
  }
}
