/**
 * The coordinator's view of a plugin: every call settles to a {@link PluginOutcome} and nothing the
 * plugin does (throw, return a non-promise, reject with anything or nothing, hang) escapes as an
 * exception. The rules follow Kafka's `StreamsGroupTopologyDescriptionManager` (kip1331-broker.md §3
 * step 6), plus the optional deadline of `group.streams.topology.description.plugin.timeout.ms` (D5).
 */
import {
  isPermanentFailure,
  type StreamsGroupTopologyDescription,
  type StreamsGroupTopologyDescriptionPlugin,
  topologyDescriptionProblem,
} from './spi.js'

/** Outcome message of a synchronous throw or a non-promise return (Kafka's text). */
export const PLUGIN_FAILED_MESSAGE = 'Topology description plugin failed.'
/** Outcome message of a rejection without a reason (Kafka's text). */
export const PLUGIN_NO_CAUSE_MESSAGE = 'Plugin failure (no cause).'

/** How a call failed; lets the caller decide what to log (Kafka logs only rejections of getTopology). */
export type PluginFailureOrigin =
  /** the method threw synchronously */
  | 'sync-throw'
  /** the method returned something that is not a promise */
  | 'not-a-promise'
  /** the promise rejected */
  | 'rejected'
  /** the promise did not settle within the deadline (D5) */
  | 'timeout'
  /** getTopology resolved to something that is neither null nor a description */
  | 'invalid-result'
  /** the call came after close() */
  | 'closed'

export interface PluginFailure {
  readonly ok: false
  readonly kind: 'permanent' | 'transient'
  /** What the coordinator reports (ErrorMessage); null when the plugin's error had no message. */
  readonly message: string | null
  readonly origin: PluginFailureOrigin
  /** What the plugin threw or rejected with (undefined for timeouts, closed and non-promise returns). */
  readonly cause: unknown
}

export type PluginOutcome<T> = { readonly ok: true; readonly value: T } | PluginFailure

/** setTimeout fires at once for larger delays, so a longer deadline cannot be honoured. */
const MAX_TIMER_MS = 2_147_483_647

/** Where the deadline's timer is armed (default: Node's timers); the simulation passes its clock. */
export interface GuardTimers {
  setTimer(callback: () => void, delayMs: number): unknown
  clearTimer(handle: unknown): void
}

const nodeTimers: GuardTimers = {
  setTimer: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

export interface GuardOptions {
  /** Deadline per call in milliseconds; unset means none (Kafka's behaviour). A positive integer. */
  readonly timeoutMs?: number | undefined
  /** The deadline's timers (default: Node's). */
  readonly timers?: GuardTimers
}

export interface GuardedTopologyDescriptionPlugin {
  /** The plugin behind the guard. */
  readonly plugin: StreamsGroupTopologyDescriptionPlugin
  setTopology(
    groupId: string,
    topologyEpoch: number,
    description: StreamsGroupTopologyDescription,
  ): Promise<PluginOutcome<void>>
  getTopology(
    groupId: string,
    topologyEpoch: number,
  ): Promise<PluginOutcome<StreamsGroupTopologyDescription | null>>
  deleteTopology(groupId: string): Promise<PluginOutcome<void>>
  /**
   * Closes the plugin once; later calls return the first call's outcome. Every call made after
   * close() fails as transient without reaching the plugin.
   */
  close(): Promise<PluginOutcome<void>>
}

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return (
    (typeof x === 'object' || typeof x === 'function') &&
    x !== null &&
    typeof (x as { then?: unknown }).then === 'function'
  )
}

/** The message of a rejection reason: an Error's message ('' counts as none), a string, or a primitive. */
function reasonMessage(reason: unknown): string | null {
  if (typeof reason === 'string') return reason === '' ? null : reason
  if (typeof reason === 'number' || typeof reason === 'boolean' || typeof reason === 'bigint')
    return String(reason)
  if (typeof reason === 'object' && reason !== null) {
    const m = (reason as { message?: unknown }).message
    if (typeof m === 'string' && m !== '') return m
  }
  return null
}

function failure(
  kind: 'permanent' | 'transient',
  message: string | null,
  origin: PluginFailureOrigin,
  cause: unknown,
): PluginFailure {
  return { ok: false, kind, message, origin, cause }
}

/** Maps a rejection reason to an outcome, as Kafka maps an exceptional completion. */
export function rejectionOutcome(reason: unknown): PluginFailure {
  if (reason === undefined || reason === null)
    return failure('transient', PLUGIN_NO_CAUSE_MESSAGE, 'rejected', reason)
  return failure(
    isPermanentFailure(reason) ? 'permanent' : 'transient',
    reasonMessage(reason),
    'rejected',
    reason,
  )
}

class Guard implements GuardedTopologyDescriptionPlugin {
  readonly plugin: StreamsGroupTopologyDescriptionPlugin
  readonly #timeoutMs: number | undefined
  readonly #timers: GuardTimers
  #closing: Promise<PluginOutcome<void>> | null = null

  constructor(
    plugin: StreamsGroupTopologyDescriptionPlugin,
    timeoutMs: number | undefined,
    timers: GuardTimers,
  ) {
    this.plugin = plugin
    this.#timeoutMs = timeoutMs
    this.#timers = timers
  }

  async #call<T>(method: string, invoke: () => unknown): Promise<PluginOutcome<T>> {
    let returned: unknown
    try {
      returned = invoke()
    } catch (e) {
      return failure('permanent', PLUGIN_FAILED_MESSAGE, 'sync-throw', e)
    }
    if (!isThenable(returned)) return failure('permanent', PLUGIN_FAILED_MESSAGE, 'not-a-promise', undefined)
    const settled = Promise.resolve(returned).then(
      (value): PluginOutcome<T> => ({ ok: true, value: value as T }),
      rejectionOutcome,
    )
    const ms = this.#timeoutMs
    if (ms === undefined) return settled
    let timer: unknown
    const deadline = new Promise<PluginOutcome<T>>((resolve) => {
      timer = this.#timers.setTimer(
        () =>
          resolve(
            failure(
              'transient',
              `Topology description plugin ${method} did not complete within ${ms} ms.`,
              'timeout',
              undefined,
            ),
          ),
        ms,
      )
    })
    // `settled` never rejects, so a call that settles after its deadline is dropped quietly.
    try {
      return await Promise.race([settled, deadline])
    } finally {
      this.#timers.clearTimer(timer)
    }
  }

  #closed(): PluginFailure {
    return failure('transient', 'Topology description plugin is closed.', 'closed', undefined)
  }

  async setTopology(
    groupId: string,
    topologyEpoch: number,
    description: StreamsGroupTopologyDescription,
  ): Promise<PluginOutcome<void>> {
    if (this.#closing !== null) return this.#closed()
    const r = await this.#call<unknown>('setTopology', () =>
      this.plugin.setTopology(groupId, topologyEpoch, description),
    )
    return r.ok ? { ok: true, value: undefined } : r
  }

  async getTopology(
    groupId: string,
    topologyEpoch: number,
  ): Promise<PluginOutcome<StreamsGroupTopologyDescription | null>> {
    if (this.#closing !== null) return this.#closed()
    const r = await this.#call<unknown>('getTopology', () => this.plugin.getTopology(groupId, topologyEpoch))
    if (!r.ok) return r
    // A plugin may resolve to undefined by mistake when nothing is stored; it means the same as null.
    if (r.value === null || r.value === undefined) return { ok: true, value: null }
    const problem = topologyDescriptionProblem(r.value)
    if (problem !== null) {
      return failure(
        'permanent',
        `Topology description plugin returned an invalid description: ${problem}.`,
        'invalid-result',
        r.value,
      )
    }
    return { ok: true, value: r.value as StreamsGroupTopologyDescription }
  }

  async deleteTopology(groupId: string): Promise<PluginOutcome<void>> {
    if (this.#closing !== null) return this.#closed()
    const r = await this.#call<unknown>('deleteTopology', () => this.plugin.deleteTopology(groupId))
    return r.ok ? { ok: true, value: undefined } : r
  }

  close(): Promise<PluginOutcome<void>> {
    if (this.#closing === null) {
      this.#closing = this.#call<unknown>('close', () => this.plugin.close()).then((r) =>
        r.ok ? { ok: true, value: undefined } : r,
      )
    }
    return this.#closing
  }
}

/**
 * Wraps a plugin so that every call settles to an outcome:
 *
 * | plugin behaviour | outcome |
 * |---|---|
 * | resolves | `{ ok: true, value }` |
 * | throws synchronously, or returns a non-promise | permanent, "Topology description plugin failed." |
 * | rejects with no reason (undefined or null) | transient, "Plugin failure (no cause)." |
 * | rejects with a permanent failure exception (any package copy) | permanent, its message |
 * | rejects with anything else | transient, its message (null when it has none) |
 * | does not settle within `timeoutMs` | transient (D5) |
 * | getTopology resolves to neither null nor a description | permanent, origin `invalid-result` |
 *
 * @throws RangeError when `timeoutMs` is set but not an integer from 1 to 2147483647.
 */
export function guardPlugin(
  plugin: StreamsGroupTopologyDescriptionPlugin,
  options: GuardOptions = {},
): GuardedTopologyDescriptionPlugin {
  const { timeoutMs, timers = nodeTimers } = options
  if (
    timeoutMs !== undefined &&
    !(Number.isSafeInteger(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)
  ) {
    throw new RangeError(`timeoutMs must be an integer from 1 to ${MAX_TIMER_MS}, got ${String(timeoutMs)}`)
  }
  return new Guard(plugin, timeoutMs, timers)
}
