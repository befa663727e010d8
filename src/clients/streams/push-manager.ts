/**
 * Pushes the topology description when the broker asks (KIP-1331), with Kafka's send conditions,
 * error table, throttle handling, back-off and log texts (StreamsGroupTopologyDescriptionRequestManager).
 */
import type { StreamsGroupTopologyDescriptionUpdateResponse } from '../../protocol/generated/messages/StreamsGroupTopologyDescriptionUpdateResponse.js'
import { errorName } from '../../protocol/errors.js'
import { ExponentialBackoff, RequestState } from '../network/backoff.js'
import { DisconnectError, KafkaError } from '../network/errors.js'
import { type Logger, silentLogger } from '../network/logger.js'
import type { WireDescription } from './wire.js'

export interface PushRequest {
  readonly groupId: string
  readonly memberId: string
  readonly topologyEpoch: number
  readonly topologyDescription: WireDescription
}

export interface PushManagerOptions {
  readonly groupId: string
  /** null when `topology.description.push.enabled` is false: nothing is ever pushed */
  readonly wireDescription: WireDescription | null
  readonly memberId: () => string | null
  readonly topologyEpoch: () => number
  readonly coordinatorKnown: () => boolean
  readonly markCoordinatorUnknown: (reason: string) => void
  /** a DisconnectException makes the caller forget the coordinator */
  readonly onDisconnect: (e: KafkaError) => void
  readonly send: (req: PushRequest) => Promise<StreamsGroupTopologyDescriptionUpdateResponse>
  readonly retryBackoffMs?: number
  readonly retryBackoffMaxMs?: number
  readonly logger?: Logger
  readonly now?: () => number
  readonly random?: () => number
}

export class TopologyPushManager {
  readonly #o: PushManagerOptions
  readonly #state: RequestState
  readonly #log: Logger
  readonly #now: () => number
  #required = false
  #nextPushTimeMs = 0
  #inFlight: Promise<void> | null = null

  constructor(o: PushManagerOptions) {
    this.#o = o
    this.#log = o.logger ?? silentLogger
    this.#now = o.now ?? Date.now
    this.#state = new RequestState(
      new ExponentialBackoff({
        initialMs: o.retryBackoffMs ?? 100,
        maxMs: o.retryBackoffMaxMs ?? 1000,
        random: o.random,
      }),
    )
  }

  get pushRequired(): boolean {
    return this.#required
  }

  /** The pending push, if any (tests and shutdown wait for it). */
  get inFlight(): Promise<void> | null {
    return this.#inFlight
  }

  /** Called with every successful heartbeat response; a false flag never clears. */
  onHeartbeatResponse(topologyDescriptionRequired: boolean): void {
    if (topologyDescriptionRequired && this.#o.wireDescription !== null) {
      this.#log.info?.({ groupId: this.#o.groupId }, 'Broker requested topology description push')
      this.#required = true
    }
  }

  /** FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID on the heartbeat clear the flag. */
  clear(): void {
    this.#required = false
  }

  #shouldSend(now: number): boolean {
    const id = this.#o.memberId()
    return (
      this.#state.canSendRequest(now) &&
      now >= this.#nextPushTimeMs &&
      this.#required &&
      this.#o.wireDescription !== null &&
      id !== null &&
      id !== '' &&
      this.#o.coordinatorKnown()
    )
  }

  /** Milliseconds until the next poll could send (Infinity when nothing is pending). */
  maximumTimeToWait(now = this.#now()): number {
    if (!this.#required) return Number.POSITIVE_INFINITY
    const w = Math.max(this.#state.remainingBackoffMs(now), Math.max(0, this.#nextPushTimeMs - now))
    if (w > 0) return w
    return this.#shouldSend(now) ? 0 : Number.POSITIVE_INFINITY
  }

  /** Sends the description when every condition holds; returns whether a request went out. */
  poll(now = this.#now()): boolean {
    if (!this.#shouldSend(now)) return false
    const groupId = this.#o.groupId
    this.#log.info?.({ groupId }, `Sending topology description for group ${groupId}`)
    this.#state.onSendAttempt(now)
    const req: PushRequest = {
      groupId,
      memberId: this.#o.memberId()!,
      topologyEpoch: this.#o.topologyEpoch(),
      topologyDescription: this.#o.wireDescription!,
    }
    let sent: Promise<StreamsGroupTopologyDescriptionUpdateResponse>
    try {
      sent = this.#o.send(req)
    } catch (e) {
      sent = Promise.reject(e)
    }
    this.#inFlight = sent
      .then(
        (res) => this.#onResponse(res),
        (e: unknown) => this.#onException(e),
      )
      .finally(() => {
        this.#inFlight = null
      })
    return true
  }

  #onException(e: unknown): void {
    const t = this.#now()
    const err = e instanceof KafkaError ? e : new KafkaError(String(e), { cause: e })
    if (err.retriable) {
      this.#state.onFailedAttempt(t)
      if (err instanceof DisconnectError) this.#o.onDisconnect(err)
      this.#log.warn?.(
        { groupId: this.#o.groupId, err },
        'Topology description push failed with retriable exception; will retry on next poll',
      )
    } else {
      this.#state.onSuccessfulAttempt(t)
      this.#required = false
      this.#log.warn?.(
        { groupId: this.#o.groupId, err },
        'Topology description push failed with non-retriable exception.',
      )
    }
  }

  #onResponse(res: StreamsGroupTopologyDescriptionUpdateResponse): void {
    const t = this.#now()
    if (res.throttleTimeMs > 0) this.#nextPushTimeMs = t + res.throttleTimeMs
    const name = errorName(res.errorCode)
    const msg = res.errorMessage
    const ctx = { groupId: this.#o.groupId }
    switch (res.errorCode) {
      case 0:
        this.#state.onSuccessfulAttempt(t)
        this.#required = false
        this.#log.info?.(ctx, 'Topology description pushed successfully')
        return
      case 16:
      case 15:
        this.#state.onFailedAttempt(t)
        this.#o.markCoordinatorUnknown(msg ?? name)
        this.#log.info?.(
          ctx,
          `Coordinator error ${name} pushing topology description. Will rediscover and retry: ${msg}`,
        )
        return
      case 14:
        this.#state.onFailedAttempt(t)
        this.#log.info?.(ctx, `Coordinator is loading; will retry on next poll: ${msg}`)
        return
      case 25:
        this.#state.onSuccessfulAttempt(t)
        this.#required = false
        this.#log.info?.(
          ctx,
          `Topology description push rejected with UNKNOWN_MEMBER_ID; heartbeat will trigger rejoin: ${msg}`,
        )
        return
      default:
        this.#state.onSuccessfulAttempt(t)
        this.#required = false
        this.#log.warn?.(ctx, `Topology description push failed with ${name}: ${msg}`)
    }
  }
}
