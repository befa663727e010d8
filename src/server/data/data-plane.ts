/**
 * The data plane of a server: the partition logs (src/log) kept in step with the topic catalog,
 * the producer ids of InitProducerId, Kafka's broker topic metrics, and the shutdown signal
 * that completes parked Fetch requests. Built by startServer before any request is served.
 */
import type { Logger } from 'pino'
import { createLogManager, type LogManager, type PartitionLog, ProducerIdManager } from '../../log/index.js'
import { ErrorCode } from '../../protocol/errors.js'
import type { TopographConfig } from '../config.js'
import type { TopicCatalog, TopicInfo } from '../topics/catalog.js'
import { BrokerTopicMetrics, installFetchSessionMetrics, type PartitionSize } from './broker-topic-metrics.js'
import { FetchSessionCache } from './fetch-sessions.js'
import { logManagerConfig, topicLogOverrides } from './log-config.js'

export class DataPlane {
  readonly logs: LogManager
  /** InitProducerId's ids: blocks reserved durably in the first log directory. */
  readonly producerIds: ProducerIdManager
  /** The first log directory, where the log layer's small files live; null for the memory engine. */
  readonly metadataDir: string | null
  readonly metrics: BrokerTopicMetrics
  /** Fetch's incremental fetch sessions (KIP-227). */
  readonly fetchSessions: FetchSessionCache
  readonly config: TopographConfig
  readonly #topics: TopicCatalog
  readonly #logger: Logger
  readonly #shutdownListeners = new Set<() => void>()
  #stopping = false

  private constructor(config: TopographConfig, logger: Logger, topics: TopicCatalog) {
    this.config = config
    this.#topics = topics
    this.#logger = logger
    const logs = createLogManager(logManagerConfig(config), { logger })
    this.logs = logs
    this.metadataDir = logs.storage.metadataDir()
    this.producerIds = new ProducerIdManager(this.metadataDir)
    this.metrics = new BrokerTopicMetrics(() => this.#sizes())
    this.fetchSessions = new FetchSessionCache({
      maxSlots: config.maxIncrementalFetchSessionCacheSlots,
      evictionMs: config.minIncrementalFetchSessionEvictionMs,
    })
    const sessions = this.fetchSessions
    installFetchSessionMetrics(() => ({
      sessions: sessions.size,
      partitionsCached: sessions.partitionsCached,
      evictions: sessions.evictions,
    }))
  }

  /**
   * Opens the logs (recovering after an unclean shutdown), opens or creates the logs of every
   * catalog topic, and connects the catalog so later topic changes reach the logs.
   */
  static async start(config: TopographConfig, logger: Logger, topics: TopicCatalog): Promise<DataPlane> {
    const data = new DataPlane(config, logger, topics)
    await data.logs.open()
    try {
      await data.producerIds.open()
      for (const t of topics.list()) await data.#create(t, 0)
      // What a crash left of topics deleted (or of partitions never made) before their files were.
      const strays = await data.logs.removeStrayPartitions()
      if (strays.length > 0) {
        logger.warn(
          { partitions: strays.length },
          `Removed ${strays.length} partition log(s) of topics no longer in the catalog (${strays.slice(0, 10).join(', ')}${strays.length > 10 ? ', …' : ''})`,
        )
      }
      // Each change's logs are created or removed while the catalog goes on (it waits for them at
      // most topic.change.log.wait.ms before answering; for a deletion, until the partitions are
      // renamed away, not until their files are gone, as Kafka removes them later too); a failure
      // is logged here, and the next start opens every catalog topic's logs again.
      topics.attachData({
        partitionsCreated: (t, from) =>
          data
            .#create(t, from)
            .catch((err: unknown) =>
              logger.error({ err, topic: t.name }, `Creating the partition logs of ${t.name} failed`),
            ),
        configsChanged: (t) => data.logs.updateTopicConfig(t.name, topicLogOverrides(t.configs)),
        topicsDeleted: async (ts) => {
          for (const t of ts) data.metrics.removeTopic(t.name)
          await Promise.all(
            ts.map((t) =>
              data.logs
                .deleteTopic(t.name, { untilRemoved: false })
                .catch((err: unknown) =>
                  logger.error({ err, topic: t.name }, `Removing the partition logs of ${t.name} failed`),
                ),
            ),
          )
        },
      })
    } catch (err) {
      await data.logs.close().catch(() => undefined)
      throw err
    }
    return data
  }

  /** The log of a partition of a catalog topic, or undefined (unknown topic or partition). */
  partition(topic: string, index: number): PartitionLog | undefined {
    return this.logs.partition(topic, index)
  }

  /**
   * The error for a partition whose log {@link partition} did not find: NOT_LEADER_OR_FOLLOWER when
   * the catalog has it (its log is still being opened after the topic change was answered; Kafka
   * answers the same before its broker has created the log, and clients retry it), else
   * UNKNOWN_TOPIC_OR_PARTITION.
   */
  missingPartitionError(topic: string, index: number): number {
    const t = this.#topics.byName(topic)
    return t !== undefined && index >= 0 && index < t.numPartitions
      ? ErrorCode.NOT_LEADER_OR_FOLLOWER
      : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
  }

  /** True once the server is stopping: parked requests answer at once. */
  get stopping(): boolean {
    return this.#stopping
  }

  /** Calls `listener` once when the server starts stopping; returns the unsubscribe function. */
  onShutdown(listener: () => void): () => void {
    this.#shutdownListeners.add(listener)
    return () => {
      this.#shutdownListeners.delete(listener)
    }
  }

  /** Completes every parked request (the listeners then answer them before closing). */
  beginShutdown(): void {
    if (this.#stopping) return
    this.#stopping = true
    for (const l of [...this.#shutdownListeners]) {
      try {
        l()
      } catch (err) {
        this.#logger.error({ err }, 'Error completing a parked request at shutdown')
      }
    }
    this.#shutdownListeners.clear()
  }

  /** Flushes and closes the logs (checkpoints, clean-shutdown marker). */
  async close(): Promise<void> {
    this.beginShutdown()
    await this.producerIds.close()
    await this.logs.close()
  }

  async #create(t: TopicInfo, fromCount: number): Promise<void> {
    await this.logs.createPartitions(
      t.name,
      t.topicId,
      fromCount,
      t.numPartitions,
      topicLogOverrides(t.configs),
    )
  }

  *#sizes(): Iterable<PartitionSize> {
    for (const t of this.#topics.list()) {
      for (let i = 0; i < t.numPartitions; i++) {
        const p = this.logs.partition(t.name, i)
        if (p !== undefined) yield { topic: t.name, partition: i, size: p.sizeInBytes }
      }
    }
  }
}
