// Starts an in-process server on a free loopback port with a fresh data.dir.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseConfig } from '../../src/server/config.js'
import { createLogger } from '../../src/server/logger.js'
import { type RunningServer, type StartServerOptions, startServer } from '../../src/server/server.js'
import { WireClient } from './wire-client.js'

export interface TestServer {
  readonly server: RunningServer
  readonly port: number
  readonly dataDir: string
  /** Closes the server; with `keepData` the data.dir survives for a restart. */
  stop(keepData?: boolean): Promise<void>
}

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'topograph-server-'))
}

export async function startTestServer(
  overrides: Record<string, string> = {},
  options: StartServerOptions = {},
  dataDir = tempDataDir(),
): Promise<TestServer> {
  const config = parseConfig({
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'data.dir': dataDir,
    'coordinator.storage': 'sqlite',
    'console.listener': 'none',
    ...overrides,
  })
  const server = await startServer(config, { logger: createLogger({ level: 'silent' }), ...options })
  let stopped = false
  return {
    server,
    port: server.address.port,
    dataDir,
    async stop(keepData = false) {
      if (!stopped) {
        stopped = true
        await server.close()
      }
      if (!keepData) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** The connections a test opens, closed together when it ends. */
export class OpenClients {
  readonly #open: { close(): void }[] = []

  /** A wire client to `port` on loopback, closed by {@link closeAll}. */
  async connect(port: number): Promise<WireClient> {
    return this.keep(await WireClient.connect(port))
  }

  /** Keeps `client` to be closed with the others. */
  keep<T extends { close(): void }>(client: T): T {
    this.#open.push(client)
    return client
  }

  /** Closes every client kept so far; later ones are kept afresh. */
  closeAll(): void {
    for (const c of this.#open.splice(0)) c.close()
  }
}
