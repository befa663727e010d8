/**
 * The topics image the shards read (Kafka's MetadataImage, reduced to topics): the service keeps it
 * from the topic catalog and tells every shard which names changed (`on-new-topics-image`). Also the
 * catalog interface the coordinator uses.
 */
import type { DeletedTopic } from '../shard/offsets/offset-metadata-manager.js'
import type { TopicMetadata, TopicsImage } from '../shard/streams/configured-topology.js'

/** A topic as the coordinator sees the catalog. */
export interface CoordinatorTopic {
  readonly name: string
  readonly topicId: string
  readonly numPartitions: number
}

/** A topic to create (the catalog's NewTopic). */
export interface CoordinatorNewTopic {
  readonly name: string
  readonly numPartitions: number
  /** -1: the broker default. */
  readonly replicationFactor: number
  readonly assignments: readonly never[]
  readonly configs: readonly { readonly name: string; readonly value: string | null }[]
}

/** The topic catalog, reduced to what the coordinator uses (the server's TopicCatalog fits). */
export interface CoordinatorTopics {
  list(): readonly CoordinatorTopic[]
  createTopics(
    topics: readonly CoordinatorNewTopic[],
    validateOnly: boolean,
  ): Promise<readonly { readonly name: string; readonly error: string; readonly message: string | null }[]>
  /**
   * Registers a listener called after topics were created or deleted; returns its removal. When
   * present, the service tells every shard at once (Kafka's onNewMetadataImage) instead of waiting
   * for the next heartbeat to notice.
   */
  onChange?(listener: (changedTopics: readonly string[]) => void): () => void
}

const NOTHING_CHANGED: readonly string[] = Object.freeze([])

/** The catalog's topics by name, as the shards see them. */
export class CatalogTopicsImage implements TopicsImage {
  readonly #catalog: CoordinatorTopics
  readonly #topics = new Map<string, TopicMetadata>()
  /**
   * Topics the refreshes found deleted: gone from the catalog, or their name now another topic's
   * (deleted and created again between two refreshes), until {@link CatalogTopicsImage.takeDeleted}.
   */
  #deleted: DeletedTopic[] = []

  constructor(catalog: CoordinatorTopics) {
    this.#catalog = catalog
  }

  topic(name: string): TopicMetadata | undefined {
    return this.#topics.get(name)
  }

  has(name: string): boolean {
    return this.#topics.has(name)
  }

  /** Every topic name (consumer groups match their subscription patterns against them). */
  topicNames(): Iterable<string> {
    return this.#topics.keys()
  }

  /** Updates the image from the catalog; returns the names that appeared, changed or disappeared. */
  refresh(): readonly string[] {
    let changed: string[] | undefined
    const listed = this.#catalog.list()
    for (const t of listed) {
      const old = this.#topics.get(t.name)
      if (old === undefined || old.topicId !== t.topicId || old.numPartitions !== t.numPartitions) {
        // The name was deleted and created again since the last refresh.
        if (old !== undefined && old.topicId !== t.topicId)
          this.#deleted.push({ name: t.name, topicId: old.topicId })
        this.#topics.set(t.name, { topicId: t.topicId, numPartitions: t.numPartitions })
        ;(changed ??= []).push(t.name)
      }
    }
    // Every listed name is in the image now; any other name has left the catalog.
    if (this.#topics.size > listed.length) {
      const seen = new Set<string>()
      for (const t of listed) seen.add(t.name)
      for (const name of this.#topics.keys()) {
        if (!seen.has(name)) {
          this.#deleted.push({ name, topicId: (this.#topics.get(name) as TopicMetadata).topicId })
          this.#topics.delete(name)
          ;(changed ??= []).push(name)
        }
      }
    }
    return changed ?? NOTHING_CHANGED
  }

  /** The topics the refreshes since the last call found deleted (their names are among the changed). */
  takeDeleted(): readonly DeletedTopic[] {
    const deleted = this.#deleted
    if (deleted.length > 0) this.#deleted = []
    return deleted
  }
}
