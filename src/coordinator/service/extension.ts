/**
 * The group coordinator as a server extension: the server starts it after its record store and
 * topic catalog are up (the object shape matches the server's ServerExtension; this folder does not
 * import the server) and closes it before the store. Handlers reach the service through
 * `ctx.server.coordinator`, narrowed with {@link coordinatorFrom}.
 */
import { loadGuardedTopologyDescriptionPlugin, PLUGIN_CLASS_KEY } from '../../plugin/loader.js'
import type { RuntimeLogger } from '../runtime/types.js'
import type { RecordStore } from '../storage/types.js'
import type { GroupCoordinatorConfig } from './config.js'
import { type CoordinatorTopics, GroupCoordinatorService } from './group-coordinator-service.js'
import { type BackoffSettings, KAFKA_BACKOFF } from './topology-description-backoff.js'

/**
 * Test-only keys (not part of the product's configuration; see docs/topology-descriptions.md):
 * shorten the topology-description back-off so end-to-end tests can watch a window pass.
 */
export const TEST_BACKOFF_INITIAL_MS_KEY = 'topograph.internal.test.topology.description.backoff.initial.ms'
export const TEST_BACKOFF_MAX_MS_KEY = 'topograph.internal.test.topology.description.backoff.max.ms'

export interface CoordinatorExtensionContext {
  /** `raw`: every configuration entry as given (the plugin's configure() receives all of them). */
  readonly config: GroupCoordinatorConfig & { readonly raw?: Readonly<Record<string, string>> }
  readonly logger: RuntimeLogger
  readonly store: RecordStore
  readonly topics: CoordinatorTopics
}

export interface StartedCoordinator {
  readonly coordinator: GroupCoordinatorService
  close(): Promise<void>
}

export const groupCoordinatorExtension = {
  name: 'group-coordinator',
  async start(ctx: CoordinatorExtensionContext): Promise<StartedCoordinator> {
    const configs: Record<string, string> = { ...(ctx.config.raw ?? {}) }
    const pluginClass = ctx.config.groupStreamsTopologyDescriptionPluginClass
    if (pluginClass !== null && configs[PLUGIN_CLASS_KEY] === undefined)
      configs[PLUGIN_CLASS_KEY] = pluginClass
    // Loaded and configured once, before any shard serves; a failure stops the start-up with a
    // message naming the configuration key (PluginLoadError).
    const plugin = await loadGuardedTopologyDescriptionPlugin(configs)
    if (plugin !== null)
      ctx.logger.info({ plugin: configs[PLUGIN_CLASS_KEY] }, 'Loaded the topology description plugin')
    let service: GroupCoordinatorService
    try {
      service = await GroupCoordinatorService.start({
        store: ctx.store,
        // The server closes the store after every extension has closed.
        closeStore: false,
        config: ctx.config,
        topics: ctx.topics,
        logger: ctx.logger,
        topologyDescriptionPlugin: plugin,
        topologyDescriptionBackoff: testBackoff(configs),
      })
    } catch (e) {
      await plugin?.close()
      throw e
    }
    return { coordinator: service, close: () => service.close() }
  },
} as const

/** The running service from the server context; throws when the extension did not start. */
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
