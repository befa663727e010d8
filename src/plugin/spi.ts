/**
 * The topology description plugin SPI (KIP-1331): the shapes a plugin stores, the interface it
 * implements and the two exceptions it signals failures with. This file imports nothing: the SPI must
 * stay usable from a plugin package that carries its own copy of `topograph`.
 */

/** A node that reads from topics. Mirrors Kafka's `TopologyDescription.Source`. */
export interface SourceNode {
  type: 'source'
  name: string
  topics: string[]
  successors: string[]
}

/** A node that processes records, possibly with state stores. Mirrors `TopologyDescription.Processor`. */
export interface ProcessorNode {
  type: 'processor'
  name: string
  stores: string[]
  successors: string[]
}

/**
 * A node that writes to a topic. `topic` is null when the sink chooses its topic dynamically (a
 * `TopicNameExtractor`). Mirrors `TopologyDescription.Sink`.
 */
export interface SinkNode {
  type: 'sink'
  name: string
  topic: string | null
  successors: string[]
}

export type TopologyNode = SourceNode | ProcessorNode | SinkNode

/** One sub-topology: its id (as Kafka Streams numbers them, for example "0") and its nodes. */
export interface SubtopologyDescription {
  id: string
  nodes: TopologyNode[]
}

/** A global store: the source that feeds it and the processor that maintains it. */
export interface GlobalStoreDescription {
  source: SourceNode
  processor: ProcessorNode
}

/**
 * What a streams application pushed for one topology epoch. Plain JSON-serialisable data (arrays,
 * never Sets or class instances), so a plugin may store `JSON.stringify(description)` and return the
 * parsed copy. Predecessors are not stored: a reader derives them by inverting `successors`.
 */
export interface StreamsGroupTopologyDescription {
  subtopologies: SubtopologyDescription[]
  globalStores: GlobalStoreDescription[]
}

/**
 * Where the coordinator keeps streams group topology descriptions.
 *
 * The contract (see docs/plugins.md):
 *
 * - **Reject, never throw.** `setTopology`, `getTopology`, `deleteTopology` and `close` return
 *   promises, and report every failure by rejecting them. A synchronous throw, or a return value that
 *   is not a promise, is treated as a permanent failure ("Topology description plugin failed.").
 * - **Permanent vs transient.** Reject with {@link StreamsTopologyDescriptionPermanentFailureException}
 *   when the same call would fail again (a description larger than the plugin accepts, a payload the
 *   plugin cannot index); the coordinator then stops asking for that topology epoch. Any other
 *   rejection, preferably {@link StreamsTopologyDescriptionTransientFailureException}, is transient:
 *   the coordinator backs off (30 s up to 1 h per group) and asks again.
 * - **Idempotent.** `setTopology` is idempotent on (groupId, topologyEpoch) and `deleteTopology` on
 *   groupId; the coordinator re-issues a call when its own bookkeeping write after an earlier call
 *   failed, and deletes groups for which nothing is stored. Both must succeed.
 * - **One epoch per group.** A group has at most one stored description; `setTopology` replaces
 *   whatever the group held, and `getTopology` resolves to null unless the stored epoch equals the
 *   requested one. Superseded epochs are not kept.
 * - **Concurrency safe.** Several members of a group may push the same epoch at once, and the cleanup
 *   cycle may delete a group while a member is pushing. Every interleaving must leave the group either
 *   holding exactly one of the descriptions that were set, or nothing.
 * - **No blocking, bounded time.** Calls run on the coordinator's event loop: use asynchronous I/O,
 *   keep synchronous work short, and settle within seconds. If the backend is down or slow, reject
 *   (transient) instead of waiting.
 * - **Bounded memory.** Plugin state shares the coordinator's heap: keep at most one description per
 *   group, enforce a maximum description size (reject larger ones permanently), and keep nothing for
 *   deleted groups.
 */
export interface StreamsGroupTopologyDescriptionPlugin {
  /**
   * Called once, before any other method, with every configuration entry of the coordinator (known
   * or not). Throwing or rejecting here stops the coordinator from starting.
   */
  configure(configs: Readonly<Record<string, string>>): void | Promise<void>
  /** Stores `description` as the group's description at `topologyEpoch`, replacing what it held. */
  setTopology(
    groupId: string,
    topologyEpoch: number,
    description: StreamsGroupTopologyDescription,
  ): Promise<void>
  /**
   * The group's description if one is stored at exactly `topologyEpoch`, otherwise null (also when the
   * plugin lost it; rejections are for backend failures only).
   */
  getTopology(groupId: string, topologyEpoch: number): Promise<StreamsGroupTopologyDescription | null>
  /** Removes whatever the group holds. Succeeds when nothing is stored. */
  deleteTopology(groupId: string): Promise<void>
  /** Releases every resource (connections, handles, timers). Called once, at shutdown. */
  close(): Promise<void>
}

/**
 * The brand that marks the two exceptions. `Symbol.for` makes it the same symbol in every copy of
 * this package loaded into one process, so a plugin built against another copy of `topograph` is
 * still recognised (an `instanceof` check alone would fail there).
 */
const FAILURE_KIND = Symbol.for('topograph.plugin.failureKind')

type FailureKind = 'permanent' | 'transient'

// Non-enumerable, so the brand does not show up in logs or JSON of the error.
function brand(e: Error, kind: FailureKind): void {
  Object.defineProperty(e, FAILURE_KIND, { value: kind, enumerable: false })
}

/**
 * A failure the plugin will not recover from for this call: the coordinator records the epoch as
 * failed and stops asking for it. The message reaches the client in `ErrorMessage`.
 */
export class StreamsTopologyDescriptionPermanentFailureException extends Error {
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options)
    this.name = 'StreamsTopologyDescriptionPermanentFailureException'
    brand(this, 'permanent')
  }
}

/** A failure that may go away (backend down, timeout): the coordinator backs off and asks again. */
export class StreamsTopologyDescriptionTransientFailureException extends Error {
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options)
    this.name = 'StreamsTopologyDescriptionTransientFailureException'
    brand(this, 'transient')
  }
}

function failureKind(e: unknown): FailureKind | undefined {
  if ((typeof e !== 'object' && typeof e !== 'function') || e === null) return undefined
  const kind: unknown = Reflect.get(e, FAILURE_KIND)
  return kind === 'permanent' || kind === 'transient' ? kind : undefined
}

/** True for a {@link StreamsTopologyDescriptionPermanentFailureException} from any copy of this package. */
export function isPermanentFailure(e: unknown): e is StreamsTopologyDescriptionPermanentFailureException {
  return failureKind(e) === 'permanent'
}

/** True for a {@link StreamsTopologyDescriptionTransientFailureException} from any copy of this package. */
export function isTransientFailure(e: unknown): e is StreamsTopologyDescriptionTransientFailureException {
  return failureKind(e) === 'transient'
}

function isStringArray(x: unknown): x is string[] {
  return Array.isArray(x) && x.every((s) => typeof s === 'string')
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}

function nodeProblem(n: unknown, where: string): string | null {
  if (!isRecord(n)) return `${where} is not an object`
  if (typeof n.name !== 'string') return `${where}.name is not a string`
  if (!isStringArray(n.successors)) return `${where}.successors is not an array of strings`
  switch (n.type) {
    case 'source':
      return isStringArray(n.topics) ? null : `${where}.topics is not an array of strings`
    case 'processor':
      return isStringArray(n.stores) ? null : `${where}.stores is not an array of strings`
    case 'sink':
      return n.topic === null || typeof n.topic === 'string' ? null : `${where}.topic is not a string or null`
    default:
      return `${where}.type is not 'source', 'processor' or 'sink'`
  }
}

/**
 * Why `x` is not a {@link StreamsGroupTopologyDescription}, or null when it is one. Extra properties
 * are tolerated; missing or mistyped ones are not.
 */
export function topologyDescriptionProblem(x: unknown): string | null {
  if (!isRecord(x)) return 'the description is not an object'
  if (!Array.isArray(x.subtopologies)) return 'subtopologies is not an array'
  if (!Array.isArray(x.globalStores)) return 'globalStores is not an array'
  for (let i = 0; i < x.subtopologies.length; i++) {
    const s: unknown = x.subtopologies[i]
    if (!isRecord(s)) return `subtopologies[${i}] is not an object`
    if (typeof s.id !== 'string') return `subtopologies[${i}].id is not a string`
    if (!Array.isArray(s.nodes)) return `subtopologies[${i}].nodes is not an array`
    for (let j = 0; j < s.nodes.length; j++) {
      const p = nodeProblem(s.nodes[j], `subtopologies[${i}].nodes[${j}]`)
      if (p !== null) return p
    }
  }
  for (let i = 0; i < x.globalStores.length; i++) {
    const g: unknown = x.globalStores[i]
    if (!isRecord(g)) return `globalStores[${i}] is not an object`
    const src = nodeProblem(g.source, `globalStores[${i}].source`)
    if (src !== null) return src
    if (isRecord(g.source) && g.source.type !== 'source')
      return `globalStores[${i}].source is not a source node`
    const proc = nodeProblem(g.processor, `globalStores[${i}].processor`)
    if (proc !== null) return proc
    if (isRecord(g.processor) && g.processor.type !== 'processor') {
      return `globalStores[${i}].processor is not a processor node`
    }
  }
  return null
}

/**
 * True when `x` has the shape of a {@link StreamsGroupTopologyDescription}. The coordinator treats a
 * `getTopology` result that is neither null nor a description as a read error.
 */
export function isTopologyDescription(x: unknown): x is StreamsGroupTopologyDescription {
  return topologyDescriptionProblem(x) === null
}
