/**
 * `startConsole(options)`: the web console and /metrics on one HTTP listener, backed by the admin
 * client against `bootstrapServers` (Topograph or any Kafka cluster that speaks KIP-1071/KIP-1331).
 */
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { Admin, type Logger, type SecurityOptions } from '../clients/admin/index.js'
import { ConsoleApi } from './api.js'
import { type ConsoleAssets, loadConsoleAssets } from './assets.js'
import { createConsoleHttpServer, type MetricsRegistry } from './http-server.js'
import { adminConsoleSource, type ConsoleSource } from './source.js'

export interface StartConsoleOptions {
  readonly bootstrapServers: readonly string[]
  /** where to listen; port 0 takes a free port (see the returned address) */
  readonly listener: { readonly host: string; readonly port: number }
  readonly logger?: Logger
  /** TLS/SASL settings of the admin client (Kafka's keys or structured options; see docs/clients.md) */
  readonly security?: SecurityOptions
  /** client.id of the admin client (topograph-console) */
  readonly clientId?: string
  /** what /metrics serves (prom-client's default registry when absent); null turns /metrics off */
  readonly metricsRegistry?: MetricsRegistry | null
  /** timeout of one admin call made for an HTTP request (10000) */
  readonly requestTimeoutMs?: number
  /**
   * Replaces the admin-backed source (which `bootstrapServers` then does not reach). For tests
   * that need group states a cluster cannot be made to show on demand.
   */
  readonly source?: ConsoleSource
  /** Serve the UI built from src/console/ui even when dist/console/ exists (tests). */
  readonly uiFromSource?: boolean
}

export interface RunningConsole {
  /** the bound address (the port actually taken when port 0 was asked for) */
  readonly address: { readonly host: string; readonly port: number }
  /** the console's base URL, `http://host:port`, with the listener's host as given (consoleUrl) */
  readonly url: string
  /** Stops listening, ends open connections and closes the admin client. Safe to call twice. */
  close(): Promise<void>
}

/** Hosts that mean every interface: a listener on them is reached at localhost from the machine. */
const EVERY_INTERFACE = new Set(['', '0.0.0.0', '::'])

/**
 * The console's base URL, as a user would type it into a browser: the listener's host as it was
 * given (`localhost` stays `localhost`, not the address it resolved to), `localhost` for a listener
 * on every interface (no host, `0.0.0.0`, `::`: browsers do not load pages from those addresses),
 * and the port actually bound (port 0 picks one).
 */
export function consoleUrl(
  listenerHost: string,
  bound: { readonly host: string; readonly port: number },
): string {
  const host = EVERY_INTERFACE.has(listenerHost) ? 'localhost' : listenerHost
  return `http://${host.includes(':') ? `[${host}]` : host}:${bound.port}`
}

async function defaultRegistry(): Promise<MetricsRegistry> {
  const prom = await import('prom-client')
  return prom.register
}

export async function startConsole(opts: StartConsoleOptions): Promise<RunningConsole> {
  const logger: Logger = opts.logger ?? {}
  const source =
    opts.source ??
    adminConsoleSource(
      Admin.create({
        ...opts.security,
        bootstrapServers: opts.bootstrapServers,
        clientId: opts.clientId ?? 'topograph-console',
        logger,
      }),
      { timeoutMs: opts.requestTimeoutMs ?? 10_000 },
    )
  const metrics = opts.metricsRegistry === undefined ? await defaultRegistry() : opts.metricsRegistry
  let assetsPromise: Promise<ConsoleAssets> | null = null
  const assets = (): Promise<ConsoleAssets> => {
    if (assetsPromise === null) {
      assetsPromise = loadConsoleAssets({ fromSource: opts.uiFromSource === true })
      assetsPromise.catch(() => {
        assetsPromise = null
      })
    }
    return assetsPromise
  }
  const server = createConsoleHttpServer({ api: new ConsoleApi(source), assets, metrics, logger })
  server.listen(opts.listener.port, opts.listener.host)
  try {
    await once(server, 'listening')
  } catch (e) {
    await source.close().catch(() => undefined)
    throw new Error(`Cannot listen on http://${opts.listener.host}:${opts.listener.port}`, { cause: e })
  }
  const bound = server.address() as AddressInfo
  const address = { host: bound.address, port: bound.port }
  const url = consoleUrl(opts.listener.host, address)
  logger.info?.({ url, bootstrapServers: opts.bootstrapServers }, `Console listening on ${url}`)
  // Build the UI eagerly so the first page load does not wait; a failure shows on that load.
  assets().catch(() => undefined)

  let closing: Promise<void> | null = null
  return {
    address,
    url,
    close: () => {
      if (closing === null) {
        closing = (async () => {
          const closed = new Promise<void>((resolve) => server.close(() => resolve()))
          server.closeAllConnections()
          await closed
          await source.close()
        })()
      }
      return closing
    },
  }
}

export { ConsoleApi, ConsoleApiError } from './api.js'
export type {
  ApiError,
  DescriptionDownload,
  GroupResponse,
  GroupsResponse,
  GroupSummary,
  ShownDescription,
} from './api-types.js'
export { type ConsoleAssets, loadConsoleAssets } from './assets.js'
export type { MetricsRegistry } from './http-server.js'
export { adminConsoleSource, type ConsoleSource, type DescribeOutcome } from './source.js'
export { topologyGraph, type TopologyGraph } from './model.js'
