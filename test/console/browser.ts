// Headless Debian Chromium driven by playwright-core, with a fresh profile; closed by `close()`.
// Also: a real in-process server with its own console, and a page of that console.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { parseConfig, type RunningServer, startServer } from '../../src/index.js'
import { createLogger } from '../../src/server/logger.js'
import { createFilledTopic } from '../helpers/data-plane.js'
import { WireClient } from '../server/wire-client.js'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Where screenshots go (gitignored). */
export const ARTIFACTS = join('.tmp', 'console')

export interface Browser {
  readonly context: BrowserContext
  close(): Promise<void>
}

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'topograph-chromium-'))
  mkdirSync(ARTIFACTS, { recursive: true })
  let context: BrowserContext
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      acceptDownloads: true,
      viewport: { width: 1400, height: 900 },
      timeout: 30_000,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
  } catch (e) {
    rmSync(profile, { recursive: true, force: true })
    throw e
  }
  return {
    context,
    close: async () => {
      try {
        await context.close()
      } finally {
        rmSync(profile, { recursive: true, force: true })
      }
    },
  }
}

/**
 * A server on a free port with memory storage under `dataDir` and its own console on a free port,
 * with `config` on top; the console's bound address is read from its log line.
 */
export async function startServerWithConsole(
  dataDir: string,
  config: Readonly<Record<string, string>>,
): Promise<{ server: RunningServer; consoleUrl: string }> {
  const lines: string[] = []
  const server = await startServer(
    parseConfig({
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'data.dir': dataDir,
      'coordinator.storage': 'memory',
      'console.listener': 'http://127.0.0.1:0',
      ...config,
    }),
    { logger: createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(l) } }) },
  )
  // The console is the server's own (step 6 of startServer); its bound address is in its log line.
  const started = lines
    .map((l) => JSON.parse(l) as { msg?: string; url?: string })
    .find((l) => l.msg?.startsWith('Console listening on') === true)
  assert.ok(started?.url !== undefined, 'the server started no console')
  return { server, consoleUrl: started.url }
}

/** A server with its console in a new temporary folder, and clients connected to it. */
export interface ConsoleServer {
  server: RunningServer
  consoleUrl: string
  /** The first client; it created and filled the topic. */
  client: WireClient
  /** Another client connected to the server, closed by `close()`. */
  connect(): Promise<WireClient>
  /** Closes the clients and the server, and removes the folder. */
  close(): Promise<void>
}

/**
 * `startServerWithConsole` in a new temporary folder named after `name`, with `topic` created and
 * `perPartition` records produced for real to each of its `partitions` partitions.
 */
export async function startConsoleServerWithTopic(
  name: string,
  config: Readonly<Record<string, string>>,
  topic: string,
  partitions: number,
  perPartition: number,
): Promise<ConsoleServer> {
  const dataDir = mkdtempSync(join(tmpdir(), `topograph-console-${name}-`))
  const clients: WireClient[] = []
  const { server, consoleUrl } = await startServerWithConsole(dataDir, config)
  const connect = async () => {
    const c = await WireClient.connect(server.address.port)
    clients.push(c)
    return c
  }
  const client = await connect()
  await createFilledTopic(client, topic, partitions, perPartition)
  return {
    server,
    consoleUrl,
    client,
    connect,
    close: async () => {
      for (const c of clients) c.close()
      await server.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** A new page of the console at `hash`, refreshing every 300 ms. */
export async function openConsolePage(browser: Browser, consoleUrl: string, hash: string): Promise<Page> {
  const page = await browser.context.newPage()
  page.setDefaultTimeout(20_000)
  await page.goto(`${consoleUrl}/?refresh=300${hash}`)
  return page
}

/** The lag table's rows: partition, owning member, committed offset, log end offset and lag. */
export function lagTableRows(page: Page): Promise<(string | null | undefined)[][]> {
  return page.$$eval('table.lag-table tbody tr', (trs) =>
    trs.map((tr) => [
      tr.getAttribute('data-partition'),
      tr.querySelector('[data-col="member"]')?.textContent,
      tr.querySelector('[data-col="committed"]')?.textContent,
      tr.querySelector('[data-col="log-end"]')?.textContent,
      tr.querySelector('[data-col="lag"]')?.textContent,
    ]),
  )
}
