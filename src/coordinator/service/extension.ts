/**
 * The group coordinator as a server extension: the server starts it after its record store and
 * topic catalog are up (the object shape matches the server's ServerExtension; this folder does not
 * import the server) and closes it before the store. Handlers reach the service through
 * `ctx.server.coordinator`, narrowed with {@link coordinatorFrom}.
 */
import type { RuntimeLogger } from '../runtime/types.js'
import type { RecordStore } from '../storage/types.js'
import type { GroupCoordinatorConfig } from './config.js'
import { type CoordinatorTopics, GroupCoordinatorService } from './group-coordinator-service.js'

export interface CoordinatorExtensionContext {
  readonly config: GroupCoordinatorConfig
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
    const service = await GroupCoordinatorService.start({
      store: ctx.store,
      // The server closes the store after every extension has closed.
      closeStore: false,
      config: ctx.config,
      topics: ctx.topics,
      logger: ctx.logger,
    })
    return { coordinator: service, close: () => service.close() }
  },
} as const

/** The running service from the server context; throws when the extension did not start. */
export function coordinatorFrom(value: unknown): GroupCoordinatorService {
  if (value instanceof GroupCoordinatorService) return value
  throw new Error('the group coordinator is not running')
}
