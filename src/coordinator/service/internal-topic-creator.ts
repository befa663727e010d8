/**
 * Creates the internal topics a streams heartbeat reports missing (MISSING_INTERNAL_TOPICS), in the
 * background, with the partition counts and configs the configured topology decided, as Kafka does
 * (the heartbeat is not held back). A name already being created, or already in the image, is not
 * asked for again; once the catalog answered, `onCreated` refreshes the image.
 */
import type { RuntimeLogger } from '../runtime/types.js'
import type { CreatableTopic } from '../shard/streams/configured-topology.js'
import type { CatalogTopicsImage, CoordinatorTopics } from './topics-image.js'

export class InternalTopicCreator {
  readonly #catalog: CoordinatorTopics
  readonly #image: CatalogTopicsImage
  readonly #log: RuntimeLogger
  readonly #onCreated: () => Promise<void>
  readonly #creating = new Set<string>()

  constructor(options: {
    readonly catalog: CoordinatorTopics
    readonly image: CatalogTopicsImage
    readonly logger: RuntimeLogger
    /** Runs after every creation attempt (the service refreshes the image and tells the shards). */
    readonly onCreated: () => Promise<void>
  }) {
    this.#catalog = options.catalog
    this.#image = options.image
    this.#log = options.logger
    this.#onCreated = options.onCreated
  }

  /** Starts creating the topics not yet being created or known; the promise ends with the attempt. */
  create(topics: readonly CreatableTopic[]): Promise<void> | undefined {
    const todo = topics.filter((t) => !this.#creating.has(t.name) && !this.#image.has(t.name))
    if (todo.length === 0) return undefined
    for (const t of todo) this.#creating.add(t.name)
    return this.#run(todo)
  }

  async #run(todo: readonly CreatableTopic[]): Promise<void> {
    try {
      const outcomes = await this.#catalog.createTopics(
        todo.map((t) => ({
          name: t.name,
          numPartitions: t.numPartitions,
          replicationFactor: t.replicationFactor,
          assignments: [],
          configs: t.configs.map((c) => ({ name: c.name, value: c.value })),
        })),
        false,
      )
      for (const o of outcomes) {
        if (o.error === 'NONE') this.#log.info({ topic: o.name }, `Created internal topic ${o.name}`)
        else if (o.error !== 'TOPIC_ALREADY_EXISTS')
          this.#log.warn(
            { topic: o.name, error: o.error },
            `Could not create internal topic ${o.name}: ${o.message}`,
          )
      }
    } catch (err) {
      this.#log.warn({ err, topics: todo.map((t) => t.name) }, 'Could not create internal topics')
    } finally {
      for (const t of todo) this.#creating.delete(t.name)
    }
    await this.#onCreated()
  }
}
