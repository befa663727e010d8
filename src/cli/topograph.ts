#!/usr/bin/env -S node --min-semi-space-size=16 --max-semi-space-size=16 --v8-pool-size=0
// The Node options on the line above fix the young generation's size (README, "Configuration"): V8
// shrinks it when the allocation rate drops and grows it back later, and the server's resident
// memory moved by some 20 MB with it. The old generation's growth is left to V8:
// `--heap-growing-percent=100` made full collections ten times rarer under a produce load but raised
// the soak's resident-memory peaks by some 25 MB (RELIABILITY.md, "Soak"). `--v8-pool-size=0` sizes
// V8's helper threads (the collector's parallel and concurrent work, the optimizing compiler) to
// the machine, one fewer than its CPUs and at least one, instead of Node's fixed four: on two CPUs
// four helpers beside the event loop made each scavenge wait for CPUs they shared with the loop and
// the clients (BENCHMARKS.md, "V8's helper threads sized to the machine"). scripts/start.sh and
// the soak start the server with the options of this line (test/helpers/topograph-process.ts,
// `cliNodeOptions`).
// `topograph start [--config FILE] [--override key=value]...`: loads the configuration, starts the
// server in the foreground and stops it gracefully on SIGTERM or SIGINT (exit status 0).
// Exit status 1: the configuration cannot be honoured or the server failed; 2: bad command line.

import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isEntryPoint } from './entry-point.js'
import { type Command, parseArgs, USAGE, UsageError } from './args.js'
import { ConfigError, loadConfigFromSources, logConfig, type TopographConfig } from '../server/config.js'
import { createLogger, errorMessages, type Logger } from '../server/logger.js'

/** What the CLI needs from src/server/server.ts (loaded lazily, see loadServerModule). */
export interface RunningServer {
  readonly address: { readonly host: string; readonly port: number }
  close(): Promise<void>
}

export interface ServerModule {
  startServer(config: TopographConfig, opts?: { logger?: Logger }): Promise<RunningServer>
}

/** Everything main() touches outside itself, so tests can run it in-process. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly loadServer: () => Promise<ServerModule>
  /** Registers a handler for SIGTERM and SIGINT; returns a function that removes it. */
  readonly onStopSignal: (handler: (signal: string) => void) => () => void
  readonly createLogger: (config: TopographConfig) => Logger
  /** Ends the process at once (a second stop signal while shutting down). */
  readonly forceExit: (code: number) => void
  /** How often a shutdown that has not completed says so (default 15 s). */
  readonly shutdownWarnMs?: number
}

/** The package version, read from the package.json above this file (works from src/ and dist/). */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string
        version?: string
      }
      if (pkg.name === 'topograph' && typeof pkg.version === 'string') return pkg.version
    } catch {
      // not here; keep walking up
    }
    const parent = dirname(dir)
    if (parent === dir) return 'unknown'
    dir = parent
  }
}

async function loadServerModule(): Promise<ServerModule> {
  // A computed specifier keeps this file compiling while src/server/server.ts is not yet written.
  const specifier = '../server/server.js'
  const mod = (await import(specifier)) as Partial<ServerModule>
  if (typeof mod.startServer !== 'function') throw new Error(`${specifier} does not export startServer()`)
  return mod as ServerModule
}

export const defaultIo: CliIo = {
  env: process.env,
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  loadServer: loadServerModule,
  onStopSignal: (handler) => {
    const onSignal = (signal: NodeJS.Signals) => handler(signal)
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
    return () => {
      process.off('SIGTERM', onSignal)
      process.off('SIGINT', onSignal)
    }
  },
  createLogger: (config) => createLogger({ level: config.logLevel }),
  forceExit: (code) => process.exit(code),
}

/** The message of an error and of each error in its cause chain ({@link errorMessages}), one per line. */
export function describeError(err: unknown): string {
  return errorMessages(err)
    .map((m, i) => (i === 0 ? m : `  caused by: ${m}`))
    .join('\n')
}

/**
 * Runs the command line and resolves with the exit status. For `start` it resolves only after a
 * stop signal has closed the server.
 */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
  // `console` and `demo` have their own options and modules (src/cli/console-command.ts, demo.ts).
  if (argv[0] === 'console')
    return (await import('./console-command.js')).runConsoleCommand(argv.slice(1), io)
  if (argv[0] === 'demo') return (await import('./demo.js')).runDemo(argv.slice(1), io)
  let cmd: Command
  try {
    cmd = parseArgs(argv)
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`topograph: ${e.message}\n\n${USAGE}\n`)
      return 2
    }
    throw e
  }
  if (cmd.command === 'help') {
    io.stdout(`${USAGE}\n`)
    return 0
  }
  if (cmd.command === 'version') {
    io.stdout(`${packageVersion()}\n`)
    return 0
  }

  let config: TopographConfig
  try {
    config = loadConfigFromSources({ configFile: cmd.configFile, env: io.env, overrides: cmd.overrides })
  } catch (e) {
    if (e instanceof ConfigError) {
      io.stderr(`topograph: ${describeError(e)}\n`)
      return 1
    }
    throw e
  }

  const logger = io.createLogger(config)
  logConfig(config, logger)

  // Signals that arrive while the server is still starting are remembered and acted on once it is up.
  let stopRequested: string | null = null
  let wake: (() => void) | null = null
  const removeHandler = io.onStopSignal((signal) => {
    if (stopRequested !== null) {
      logger.warn({ signal }, 'Second stop signal during shutdown; exiting without waiting.')
      io.stderr(`topograph: stopped by a second ${signal} before shutdown completed\n`)
      io.forceExit(1)
      return
    }
    stopRequested = signal
    wake?.()
  })

  try {
    let server: RunningServer
    try {
      const mod = await io.loadServer()
      server = await mod.startServer(config, { logger })
    } catch (e) {
      logger.error({ err: e }, 'Fatal error during server startup. Prepare to shutdown')
      io.stderr(`topograph: start-up failed: ${describeError(e)}\n`)
      return 1
    }
    const { host, port } = server.address
    logger.info({ host, port }, `Awaiting socket connections on ${host}:${port}.`)

    // `--demo`: sample streams applications against this server. A demo that cannot start is
    // logged and the server keeps serving.
    let demo: { close(): Promise<void> } | null = null
    if (cmd.demo && stopRequested === null) {
      try {
        const { startDemo } = await import('./demo.js')
        const h = host === '' || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
        demo = await startDemo({
          bootstrapServers: `${h.includes(':') ? `[${h}]` : h}:${port}`,
          log: (line) => logger.info({ component: 'demo' }, line),
        })
      } catch (e) {
        logger.error({ err: e }, 'The demo applications could not start')
      }
    }

    if (stopRequested === null) await new Promise<void>((resolve) => (wake = resolve))
    logger.info({ signal: stopRequested }, 'Shutting down')
    // Once the listeners are closed, a close still waiting (on a paused connection's answer, say)
    // may hold nothing that keeps the event loop alive, and the process would end mid-shutdown
    // with its stores open and no word said. This timer keeps it up and says what it waits for.
    const shutdownStarted = Date.now()
    const keepAlive = setInterval(() => {
      const seconds = Math.round((Date.now() - shutdownStarted) / 1000)
      logger.warn({ seconds }, 'Shutdown still in progress; a second stop signal exits without waiting')
    }, io.shutdownWarnMs ?? 15_000)
    try {
      await demo
        ?.close()
        .catch((e: unknown) => logger.warn({ err: e }, 'Demo applications did not leave cleanly'))
      await server.close()
    } catch (e) {
      logger.error({ err: e }, 'Error during shutdown')
      io.stderr(`topograph: shutdown failed: ${describeError(e)}\n`)
      return 1
    } finally {
      clearInterval(keepAlive)
    }
    logger.info({}, 'Shut down completed')
    return 0
  } finally {
    removeHandler()
  }
}

if (isEntryPoint(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(
        `topograph: unexpected error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
      )
      process.exit(1)
    },
  )
}
