/**
 * Starting the group coordinator: the server's composition root (src/server/server.ts) calls
 * {@link startGroupCoordinator} after its record store and topic catalog are up, hands the service
 * to every handler as `ctx.server.coordinator`, and closes it before the store.
 */
import { loadGuardedTopologyDescriptionPlugin, PLUGIN_CLASS_KEY } from '../../plugin/loader.js'
import type { RuntimeLogger } from '../runtime/types.js'
import type { RecordStore } from '../storage/types.js'
import type { GroupCoordinatorConfig } from './config.js'
import { GroupCoordinatorService } from './group-coordinator-service.js'
import type { CoordinatorTopics } from './topics-image.js'
import { type BackoffSettings, KAFKA_BACKOFF } from './topology-description-backoff.js'

/**
 * Test-only keys (not part of the product's configuration; see docs/topology-descriptions.md):
 * shorten the topology-description back-off so end-to-end tests can watch a window pass.
 */
export const TEST_BACKOFF_INITIAL_MS_KEY = 'topograph.internal.test.topology.description.backoff.initial.ms'
export const TEST_BACKOFF_MAX_MS_KEY = 'topograph.internal.test.topology.description.backoff.max.ms'

export interface GroupCoordinatorStartContext {
  /** `raw`: every configuration entry as given (the plugin's configure() receives all of them). */
  readonly config: GroupCoordinatorConfig & { readonly raw?: Readonly<Record<string, string>> }
  readonly logger: RuntimeLogger
  readonly store: RecordStore
  readonly topics: CoordinatorTopics
}

/**
 * Loads and configures the topology description plugin (when one is configured), then starts the
 * service over the server's store (which the server keeps and closes). A plugin that cannot be
 * loaded stops the start-up with a message naming the configuration key (PluginLoadError).
 */
export async function startGroupCoordinator(
  ctx: GroupCoordinatorStartContext,
): Promise<GroupCoordinatorService> {
  const configs: Record<string, string> = { ...(ctx.config.raw ?? {}) }
  const pluginClass = ctx.config.groupStreamsTopologyDescriptionPluginClass
  if (pluginClass !== null && configs[PLUGIN_CLASS_KEY] === undefined) configs[PLUGIN_CLASS_KEY] = pluginClass
  // Loaded and configured once, before any shard serves.
  const plugin = await loadGuardedTopologyDescriptionPlugin(configs)
  if (plugin !== null)
    ctx.logger.info({ plugin: configs[PLUGIN_CLASS_KEY] }, 'Loaded the topology description plugin')
  try {
    return await GroupCoordinatorService.start({
      store: ctx.store,
      // The server closes the store after the coordinator has closed.
      closeStore: false,
      config: ctx.config,
      topics: ctx.topics,
      logger: ctx.logger,
      topologyDescriptionPlugin: plugin,
      topologyDescriptionBackoff: testBackoff(configs),
      // The requests read from every connection in one turn of the event loop share one batch
      // per shard and one store write (BENCHMARKS.md, "OffsetCommit: one batch a turn").
      appendLinger: 'turn',
    })
  } catch (e) {
    await plugin?.close()
    throw e
  }
}

/** The running service from a server context (for callers holding it untyped); throws otherwise. */
export function coordinatorFrom(value: unknown): GroupCoordinatorService {
  if (value instanceof GroupCoordinatorService) return value
  throw new Error('the group coordinator is not running')
}

function testBackoff(configs: Readonly<Record<string, string>>): BackoffSettings | undefined {
  const initial = configs[TEST_BACKOFF_INITIAL_MS_KEY]
  const max = configs[TEST_BACKOFF_MAX_MS_KEY]
  if (initial === undefined && max === undefined) return undefined
  const parse = (key: string, text: string | undefined, fallback: number): number => {
    if (text === undefined) return fallback
    const n = Number(text.trim())
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`Invalid value ${text} for configuration ${key}`)
    return n
  }
  const initialMs = parse(TEST_BACKOFF_INITIAL_MS_KEY, initial, KAFKA_BACKOFF.initialMs)
  const maxMs = parse(TEST_BACKOFF_MAX_MS_KEY, max, Math.max(initialMs, KAFKA_BACKOFF.maxMs))
  return { ...KAFKA_BACKOFF, initialMs, maxMs }
}
