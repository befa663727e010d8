// Topic auto-creation, as Kafka's AutoTopicCreationManager: Metadata creates the unknown topics it
// is asked for (auto.create.topics.enable), FindCoordinator the coordinator's own topic. Both go
// through here, so a topic asked for by several requests at once is created once (Kafka's in-flight
// set), and every request asking waits for that one creation.
import {
  GROUP_METADATA_TOPIC_NAME,
  SHARE_GROUP_STATE_TOPIC_NAME,
  TRANSACTION_STATE_TOPIC_NAME,
} from '../../protocol/topics.js'
import type { ServerContext } from '../router.js'
import type { NewTopic, TopicCatalog } from './catalog.js'

/**
 * The topic auto-creation asks for, as Kafka's AutoTopicCreationManager: the defaults, but a
 * coordinator's topic with its partition count and the log configs Kafka's coordinator gives it
 * (GroupCoordinatorService.groupMetadataTopicConfigs,
 * TransactionCoordinator.transactionStateTopicConfigs,
 * ShareCoordinatorService.shareGroupStateTopicConfigs, without the replication-only
 * min.insync.replicas).
 */
function autoCreated(name: string, server: ServerContext): NewTopic {
  const topic = (numPartitions: number, configs: Readonly<Record<string, string>>): NewTopic => ({
    name,
    numPartitions,
    replicationFactor: -1,
    assignments: [],
    configs: Object.entries(configs).map(([key, value]) => ({ name: key, value })),
  })
  const compacted = (compression: string, segmentBytes: number) => ({
    'cleanup.policy': 'compact',
    'compression.type': compression,
    'segment.bytes': String(segmentBytes),
  })
  const config = server.config
  switch (name) {
    case GROUP_METADATA_TOPIC_NAME:
      return topic(config.offsetsTopicNumPartitions, compacted('producer', config.offsetsTopicSegmentBytes))
    case TRANSACTION_STATE_TOPIC_NAME:
      return topic(
        config.transactionStateLogNumPartitions,
        compacted('uncompressed', config.transactionStateLogSegmentBytes),
      )
    case SHARE_GROUP_STATE_TOPIC_NAME:
      return topic(config.shareCoordinatorStateTopicNumPartitions, {
        'cleanup.policy': 'delete',
        'compression.type': 'producer',
        'segment.bytes': String(config.shareCoordinatorStateTopicSegmentBytes),
        'retention.ms': '-1',
      })
    default:
      return { name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] }
  }
}

/** The creations under way, per catalog: name → the creation every asker waits for. */
const inFlight = new WeakMap<TopicCatalog, Map<string, Promise<void>>>()

/**
 * Creates the topics with the defaults (a coordinator's topic as its coordinator would), each once
 * however many requests ask at the same time; resolves when they are created or have failed.
 * Failures are logged, as Kafka's auto-creation logs them.
 */
export async function autoCreateTopics(server: ServerContext, names: readonly string[]): Promise<void> {
  let creating = inFlight.get(server.topics)
  if (creating === undefined) {
    creating = new Map()
    inFlight.set(server.topics, creating)
  }
  const waits: Promise<void>[] = []
  const fresh: string[] = []
  for (const name of names) {
    const pending = creating.get(name)
    if (pending !== undefined) waits.push(pending)
    else fresh.push(name)
  }
  if (fresh.length > 0) {
    const created = (async () => {
      try {
        let outcomes: Awaited<ReturnType<typeof server.topics.createTopics>>
        try {
          outcomes = await server.topics.createTopics(
            fresh.map((name) => autoCreated(name, server)),
            false,
          )
        } catch (err) {
          // The catalog could not write (its record store is down): the topics are not created
          // and every asker goes on without them, as after a refused creation; the next one tries
          // again. A rejection here would answer the request UNKNOWN_SERVER_ERROR.
          const reason = err instanceof Error ? err.message : String(err)
          for (const name of fresh)
            server.logger.warn({ topic: name, err }, `Auto topic creation failed for ${name}: ${reason}.`)
          return
        }
        for (const o of outcomes) {
          if (o.error === 'NONE') server.logger.info({ topic: o.name }, `Auto-created topic ${o.name}`)
          else
            server.logger.warn(
              { topic: o.name, error: o.error },
              `Auto topic creation failed for ${o.name} with error '${o.error}': ${o.message}.`,
            )
        }
      } finally {
        for (const name of fresh) creating.delete(name)
      }
    })()
    for (const name of fresh) creating.set(name, created)
    waits.push(created)
  }
  await Promise.all(waits)
}
