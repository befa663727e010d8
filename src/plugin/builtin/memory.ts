/**
 * The in-memory plugin (alias `memory`), the counterpart of Kafka's `InMemoryTopologyDescriptionPlugin`:
 * one entry per group holding one epoch; setTopology overwrites the entry whatever its epoch;
 * getTopology answers null unless the stored epoch is the one asked for; deleteTopology always
 * succeeds. Unlike Kafka's, it is bounded: a push that would exceed the number of groups or the total
 * bytes is rejected permanently. Descriptions are kept as JSON text, so callers never share objects
 * with the store and the byte count is exact. Nothing survives a restart.
 */
import {
  type StreamsGroupTopologyDescription,
  type StreamsGroupTopologyDescriptionPlugin,
  StreamsTopologyDescriptionPermanentFailureException,
  StreamsTopologyDescriptionTransientFailureException,
} from '../spi.js'
import {
  checkEpoch,
  checkGroupId,
  decodeStored,
  encodeForSet,
  intConfig,
  maxDescriptionBytes,
} from './common.js'

import { MEMORY_MAX_BYTES_KEY, MEMORY_MAX_GROUPS_KEY } from './keys.js'

export { MEMORY_MAX_BYTES_KEY, MEMORY_MAX_GROUPS_KEY }
export const DEFAULT_MEMORY_MAX_GROUPS = 10_000
export const DEFAULT_MEMORY_MAX_BYTES = 67_108_864

interface Entry {
  readonly epoch: number
  readonly json: string
  readonly bytes: number
}

export class InMemoryTopologyDescriptionPlugin implements StreamsGroupTopologyDescriptionPlugin {
  readonly #entries = new Map<string, Entry>()
  #totalBytes = 0
  #maxGroups = DEFAULT_MEMORY_MAX_GROUPS
  #maxBytes = DEFAULT_MEMORY_MAX_BYTES
  #maxDescriptionBytes = maxDescriptionBytes({})
  #closed = false

  configure(configs: Readonly<Record<string, string>>): void {
    this.#maxGroups = intConfig(configs, MEMORY_MAX_GROUPS_KEY, DEFAULT_MEMORY_MAX_GROUPS, 1)
    this.#maxBytes = intConfig(configs, MEMORY_MAX_BYTES_KEY, DEFAULT_MEMORY_MAX_BYTES, 1)
    this.#maxDescriptionBytes = maxDescriptionBytes(configs)
  }

  /** Number of groups held and the UTF-8 bytes of their descriptions (for tests and metrics). */
  get usage(): { readonly groups: number; readonly bytes: number } {
    return { groups: this.#entries.size, bytes: this.#totalBytes }
  }

  #checkOpen(): void {
    if (this.#closed)
      throw new StreamsTopologyDescriptionTransientFailureException('The in-memory plugin is closed.')
  }

  async setTopology(
    groupId: string,
    topologyEpoch: number,
    description: StreamsGroupTopologyDescription,
  ): Promise<void> {
    this.#checkOpen()
    const { json, bytes } = encodeForSet(groupId, topologyEpoch, description, this.#maxDescriptionBytes)
    const previous = this.#entries.get(groupId)
    if (previous === undefined && this.#entries.size >= this.#maxGroups) {
      throw new StreamsTopologyDescriptionPermanentFailureException(
        `The in-memory plugin holds the maximum of ${this.#maxGroups} groups (${MEMORY_MAX_GROUPS_KEY}).`,
      )
    }
    const total = this.#totalBytes - (previous?.bytes ?? 0) + bytes
    if (total > this.#maxBytes) {
      throw new StreamsTopologyDescriptionPermanentFailureException(
        `Storing this ${bytes}-byte description would exceed the in-memory plugin's maximum of ${this.#maxBytes} bytes (${MEMORY_MAX_BYTES_KEY}).`,
      )
    }
    this.#entries.set(groupId, { epoch: topologyEpoch, json, bytes })
    this.#totalBytes = total
  }

  async getTopology(groupId: string, topologyEpoch: number): Promise<StreamsGroupTopologyDescription | null> {
    this.#checkOpen()
    checkGroupId(groupId)
    checkEpoch(topologyEpoch)
    const entry = this.#entries.get(groupId)
    if (entry === undefined || entry.epoch !== topologyEpoch) return null
    return decodeStored(
      entry.json,
      groupId,
      (m) => new StreamsTopologyDescriptionTransientFailureException(m),
    )
  }

  async deleteTopology(groupId: string): Promise<void> {
    this.#checkOpen()
    checkGroupId(groupId)
    const entry = this.#entries.get(groupId)
    if (entry === undefined) return
    this.#entries.delete(groupId)
    this.#totalBytes -= entry.bytes
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#entries.clear()
    this.#totalBytes = 0
  }
}

export default InMemoryTopologyDescriptionPlugin
