import { readdir } from 'node:fs/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Logger } from 'pino'
import { GROUP_CONFIG_LOG_ID } from '../coordinator/service/group-config-manager.js'
import { startGroupCoordinator } from '../coordinator/service/start.js'
import {
  PrefetchingProducerIds,
  TransactionCoordinatorService,
  transactionLogsStart,
} from '../coordinator/service/transaction-coordinator-service.js'
import { createRecordStore, type RecordStoreKind } from '../coordinator/storage/index.js'
import type { RecordStore } from '../coordinator/storage/types.js'
import { AclAuthorizer, parseSuperUsers } from './auth/authorizer.js'
import { parseScramUsers } from './auth/scram.js'
import { ScramCredentialStore } from './auth/scram-store.js'
import { resolveListenerSecurity } from './auth/security.js'
import { loadOrCreateClusterIdentity } from './cluster.js'
import type { TopographConfig } from './config.js'
import { RequestGate } from './connection.js'
import { ConnectionQuotas, resolveOverrides } from './connection-quotas.js'
import { nextCoordinatorEpoch } from './data/coordinator-epoch.js'
import { DataPlane } from './data/data-plane.js'
import { PartitionMarkerWriter } from './data/txn-markers.js'
import { type BoundListener, Listener } from './listener.js'
import { createLogger } from './logger.js'
import {
  installGroupCoordinatorMetrics,
  installGroupCountGauges,
  installProcessMetrics,
  installServerMetrics,
} from './metrics.js'
import {
  ALLOW_ALL,
  type AdvertisedNode,
  type ApiHandler,
  ApiRouter,
  type Authorizer,
  type ServerContext,
} from './router.js'
import { ClientQuotas } from './quotas/client-quotas.js'
import { TopicCatalog } from './topics/catalog.js'

/**
 * `startServer(config)`: the Kafka-protocol server in this process.
 *
 * Start: cluster identity (data.dir/meta.properties) → record store → topic catalog → partition
 * logs (the data plane) → group coordinator → handlers (every `handlers/NNN-api-name` module, plus
 * `options.handlers`) → extensions → listeners. `close()` reverses it: parked fetches complete and
 * parked classic joins and syncs are answered NOT_COORDINATOR,
 * listeners stop accepting and every connection's in-flight requests are answered, then extensions
 * and the coordinator close, then the logs and the store are flushed and closed.
 */

/** What an extension gets at start-up. */
export interface ExtensionContext {
  readonly config: TopographConfig
  readonly logger: Logger
  readonly store: RecordStore
  readonly topics: TopicCatalog
  /** The partition logs. */
  readonly data: DataPlane
  readonly clusterId: string
  readonly nodeId: number
  /** Adds a handler for an API key no other handler serves. */
  register(handler: ApiHandler): void
}

export interface StartedExtension {
  close(): Promise<void>
}

export interface ServerExtension {
  readonly name: string
  start(ctx: ExtensionContext): Promise<StartedExtension>
}

export interface StartServerOptions {
  readonly logger?: Logger
  /** Handlers in addition to the handler modules. */
  readonly handlers?: readonly ApiHandler[]
  /** Extensions, started after the handlers (in addition to those the handler modules export). */
  readonly extensions?: readonly ServerExtension[]
  readonly authorizer?: Authorizer
}

export interface RunningServer {
  /** The first listener's bound address (the port actually taken when port 0 was configured). */
  readonly address: { readonly host: string; readonly port: number }
  readonly listeners: readonly BoundListener[]
  readonly clusterId: string
  readonly context: ServerContext
  /** Graceful stop: in-flight requests answered, storage flushed and closed. Safe to call twice. */
  close(): Promise<void>
}

/** What a handler module (`handlers/NNN-api-name.ts`) may export. */
interface HandlerModule {
  readonly handler?: ApiHandler
  readonly handlers?: readonly ApiHandler[]
  readonly extension?: ServerExtension
}

const HANDLER_FILE = /^\d{3}-[a-z0-9-]+\.(?:ts|js)$/

/** Imports every `NNN-api-name` module of the handlers folder, in file-name order. */
export async function loadHandlerModules(): Promise<HandlerModule[]> {
  const dir = new URL('./handlers/', import.meta.url)
  const files = (await readdir(fileURLToPath(dir)))
    .filter((f) => HANDLER_FILE.test(f) && !f.endsWith('.d.ts'))
    .sort()
  const modules: HandlerModule[] = []
  for (const f of files)
    modules.push((await import(pathToFileURL(fileURLToPath(new URL(f, dir))).href)) as HandlerModule)
  return modules
}

export async function startServer(
  config: TopographConfig,
  options: StartServerOptions = {},
): Promise<RunningServer> {
  const logger = options.logger ?? createLogger({ level: config.logLevel })
  const nodeId = config.nodeId

  // 1. Listener security (TLS material and SASL credentials are read and checked here). SCRAM
  //    exchanges look credentials up in the credential store, which loads its stored ones below.
  const scram = new ScramCredentialStore({
    configured: parseScramUsers(config.raw['sasl.scram.users'] ?? ''),
    logger,
  })
  const security = resolveListenerSecurity(config, scram)
  // Shards are logs 0 … n-1 of the record store; the group configs, ACLs and topic catalog have the
  // highest log ids.
  if (config.offsetsTopicNumPartitions >= GROUP_CONFIG_LOG_ID) {
    throw new Error(`offsets.topic.num.partitions must be below ${GROUP_CONFIG_LOG_ID}`)
  }
  if (config.offsetsTopicNumPartitions > transactionLogsStart(config.transactionStateLogNumPartitions)) {
    throw new Error(
      'offsets.topic.num.partitions and transaction.state.log.num.partitions together exceed the record store',
    )
  }

  // 2. Cluster id, storage, topic catalog.
  const identity = loadOrCreateClusterIdentity(config.dataDir, nodeId)
  if (identity.created)
    logger.info({ clusterId: identity.clusterId }, `Created cluster id ${identity.clusterId}`)
  const store = createRecordStore(config.coordinatorStorage as RecordStoreKind, config.dataDir, { logger })
  await store.open()
  const cleanup: (() => Promise<void>)[] = [() => store.close()]
  const undo = async () => {
    for (const f of cleanup.reverse()) await f().catch(() => undefined)
  }
  try {
    const topics = await TopicCatalog.load(store, {
      nodeId,
      defaultNumPartitions: config.numPartitions,
      defaultReplicationFactor: config.defaultReplicationFactor,
      maxPartitionsPerTopic: config.topicMaxPartitions,
      maxPartitions: config.maxPartitions,
      logWaitMs: config.topicChangeLogWaitMs,
    })
    const data = await DataPlane.start(config, logger, topics)
    cleanup.push(() => data.close())

    // 3. The group coordinator (its shards load here), then handlers and extensions.
    const coordinator = await startGroupCoordinator({ config, logger, store, topics })
    cleanup.push(() => coordinator.close())
    // Kafka's group coordinator metrics on prom-client's default registry (what /metrics serves).
    installGroupCoordinatorMetrics()
    installGroupCountGauges(() => coordinator.groupCounts())
    // The transaction coordinator: its shards are the store's logs just below the reserved ones;
    // producer ids come from the same durable source as the idempotent producers' ones.
    const producerIds = new PrefetchingProducerIds(() => data.producerIds.next(), {
      onError: (err) => logger.error({ err }, 'Failed to allocate producer ids'),
    })
    await producerIds.fill()
    const transactionVersion = config.transactionVersion
    const transactions = await TransactionCoordinatorService.start({
      store,
      config: {
        transactionStateLogNumPartitions: config.transactionStateLogNumPartitions,
        transactionMaxTimeoutMs: config.transactionMaxTimeoutMs,
        transactionalIdExpirationMs: config.transactionalIdExpirationMs,
        abortTimedOutTransactionCleanupIntervalMs:
          config.transactionAbortTimedOutTransactionCleanupIntervalMs,
        removeExpiredTransactionalIdsCleanupIntervalMs:
          config.transactionRemoveExpiredTransactionCleanupIntervalMs,
        offsetsTopicNumPartitions: config.offsetsTopicNumPartitions,
      },
      producerIds,
      markers: new PartitionMarkerWriter(data, {
        offsetsTopicNumPartitions: config.offsetsTopicNumPartitions,
        // The group coordinator makes the producer's pending offsets committed or drops them.
        offsets: (marker, partition) => coordinator.completeTransaction(partition, marker),
      }),
      transactionVersionLevel: () => transactionVersion,
      // One above the last start's: markers of an earlier start are fenced where a newer one wrote.
      coordinatorEpoch: nextCoordinatorEpoch(data.metadataDir),
      writeTimeoutMs: config.offsetsCommitTimeoutMs,
      logger,
    })
    cleanup.push(() => transactions.close())
    const router = new ApiRouter()
    const extensions: ServerExtension[] = []
    for (const m of await loadHandlerModules()) {
      if (m.handler !== undefined) router.register(m.handler)
      for (const h of m.handlers ?? []) router.register(h)
      if (m.extension !== undefined) extensions.push(m.extension)
    }
    for (const h of options.handlers ?? []) router.register(h)
    extensions.push(...(options.extensions ?? []))
    for (const ext of extensions) {
      const started = await ext.start({
        config,
        logger,
        store,
        topics,
        data,
        clusterId: identity.clusterId,
        nodeId,
        register: (h) => router.register(h),
      })
      cleanup.push(() => started.close())
    }

    // 4. Authorizer: the built-in ACL authorizer when authorizer.class.name is set.
    let authorizer: Authorizer = options.authorizer ?? ALLOW_ALL
    if (options.authorizer === undefined && config.authorizerClassName !== '') {
      authorizer = await AclAuthorizer.load(store, {
        superUsers: parseSuperUsers(config.superUsers),
        allowEveryoneIfNoAclFound: config.allowEveryoneIfNoAclFound,
        maxAcls: config.maxAcls,
        maxAclBytes: config.maxAclBytes,
      })
    }

    // 5. Listeners.
    const gate = new RequestGate(config.queuedMaxRequests)
    const quotaRate = { samples: config.quotaWindowNum, windowMs: config.quotaWindowSizeSeconds * 1000 }
    const quotas = await ClientQuotas.load({ store, logger, rate: quotaRate })
    await scram.load(store)
    const connectionQuotas = new ConnectionQuotas(
      {
        maxConnections: config.maxConnections,
        maxConnectionsPerIp: config.maxConnectionsPerIp,
        overrides: await resolveOverrides(config.maxConnectionsPerIpOverrides),
        maxWaiting: config.socketListenBacklogSize,
        maxConnectionCreationRate: config.maxConnectionCreationRate,
        rate: quotaRate,
      },
      logger,
    )
    connectionQuotas.rateCheck = (host, nowMs) => quotas.connectionThrottleMs(host, nowMs)
    const listeners = config.listeners.map(
      (endpoint) =>
        new Listener(
          endpoint,
          router,
          {
            maxFrameSize: config.socketRequestMaxBytes,
            gate,
            idleTimeoutMs: Number(config.connectionsMaxIdleMs),
          },
          logger,
          {
            security: security.get(endpoint.listenerName),
            clientHostScope: authorizer instanceof AclAuthorizer,
            quotas: connectionQuotas,
            backlog: config.socketListenBacklogSize,
          },
        ),
    )
    const bound: BoundListener[] = []
    const boundByName = new Map<string, BoundListener>()
    const advertisedByName = new Map<string, AdvertisedNode>()
    const advertisedNode = (listenerName: string): AdvertisedNode => {
      let node = advertisedByName.get(listenerName)
      if (node === undefined) {
        const adv =
          config.advertisedListeners.find((a) => a.listenerName === listenerName) ??
          config.advertisedListeners[0]
        const port = adv.port === 0 ? (boundByName.get(adv.listenerName)?.port ?? 0) : adv.port
        node = { nodeId, host: adv.host, port }
        advertisedByName.set(listenerName, node)
      }
      return node
    }
    const context: ServerContext = {
      config,
      logger,
      topics,
      clusterId: identity.clusterId,
      nodeId,
      authorizer,
      coordinator,
      data,
      transactions,
      transactionVersion,
      quotas,
      scram,
      advertisedNode,
      supportedApis: () => router.supportedApis(),
    }
    router.bind(context)
    for (const l of listeners) {
      cleanup.push(() => l.close())
      const b = await l.start()
      bound.push(b)
      boundByName.set(b.listenerName, b)
      logger.info(
        { listener: b.listenerName, host: b.host, port: b.port },
        `Listening on ${b.listenerName}://${b.host}:${b.port}`,
      )
    }
    // Session timers count from now, not from when the shards loaded.
    coordinator.servingStarted()
    transactions.servingStarted()

    // 6. Console and /metrics on console.listener (`none` turns it off). The console reads the
    //    groups through the admin client over this server's own first listener, like any client.
    if (config.consoleListener !== null) {
      // What /metrics serves besides the coordinator's and the data plane's metrics.
      installProcessMetrics()
      installServerMetrics({
        requestCounts: () => router.requestCounts(),
        connectionCounts: () =>
          listeners.map((l) => ({ listener: l.bound.listenerName, count: l.connectionCount })),
      })
      const { startConsole } = await import('../console/index.js')
      const own = bound[0]
      const wildcard = own.host === '' || own.host === '0.0.0.0' || own.host === '::'
      const host = wildcard ? '127.0.0.1' : own.host.includes(':') ? `[${own.host}]` : own.host
      const running = await startConsole({
        bootstrapServers: [`${host}:${own.port}`],
        listener: config.consoleListener,
        logger,
      })
      cleanup.push(() => running.close())
    }

    let closing: Promise<void> | undefined
    const close = (): Promise<void> => {
      closing ??= (async () => {
        data.beginShutdown()
        // Requests parked until other members act are answered now: the listeners wait for them.
        coordinator.beginShutdown()
        await Promise.all(listeners.map((l) => l.close()))
        for (const f of cleanup.reverse()) {
          try {
            await f()
          } catch (err) {
            logger.error({ err }, 'Error during shutdown')
          }
        }
        logger.info('Server shut down')
      })()
      return closing
    }
    return {
      address: { host: bound[0].host, port: bound[0].port },
      listeners: bound,
      clusterId: identity.clusterId,
      context,
      close,
    }
  } catch (err) {
    await undo()
    throw err
  }
}
