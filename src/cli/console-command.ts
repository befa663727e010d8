/**
 * `topograph console --bootstrap-server HOST:PORT[,HOST:PORT…] [--listener http://host:port]
 * [--command-config FILE]`: the web console alone, against any cluster that speaks the streams
 * group APIs (Topograph, Apache Kafka 4.4). Runs until SIGINT/SIGTERM. Exit status 0 after a stop
 * signal, 1 when the listener cannot be opened or the command config cannot be used, 2 for a bad
 * command line.
 */
import { type KafkaSecurityConfig, resolveSecurity } from '../clients/network/security.js'
import { startConsole } from '../console/index.js'
import { loadCommandConfig } from './streams-groups/command-config.js'

export const CONSOLE_USAGE = `Usage: topograph console --bootstrap-server HOST:PORT[,HOST:PORT...] [--listener http://host:port] [--command-config FILE]

Serves the web console (streams groups and their topologies) and /metrics for a cluster.

  --bootstrap-server LIST   The cluster to describe (required).
  --listener URL            Where the console listens (default http://localhost:8080).
  --command-config FILE     Client properties for the cluster connection: security.protocol,
                            sasl.mechanism, sasl.jaas.config, ssl.truststore.*, ssl.keystore.*,
                            client.id (see docs/clients.md).`

export interface ConsoleCommandIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  /** Registers a handler for SIGTERM and SIGINT; returns a function that removes it. */
  readonly onStopSignal: (handler: (signal: string) => void) => () => void
}

export interface ConsoleArgs {
  readonly bootstrapServers: string[]
  readonly listener: { readonly host: string; readonly port: number }
  /** the --command-config file, when given */
  readonly commandConfig?: string
}

/** Parses the arguments after `console`; a string is a usage error. */
export function parseConsoleArgs(argv: readonly string[]): ConsoleArgs | 'help' | string {
  let bootstrap: string | undefined
  let listener = 'http://localhost:8080'
  let commandConfig: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--help' || arg === '-h') return 'help'
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1
    const name = eq > 0 ? arg.slice(0, eq) : arg
    if (name !== '--bootstrap-server' && name !== '--listener' && name !== '--command-config')
      return `unknown option '${arg}' for console`
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i]
    if (value === undefined || value === '' || value.startsWith('--')) return `${name} needs a value`
    if (name === '--bootstrap-server') bootstrap = value
    else if (name === '--command-config') commandConfig = value
    else listener = value
  }
  if (bootstrap === undefined) return '--bootstrap-server is required'
  const m = /^http:\/\/(?:\[([0-9A-Fa-f:.%]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})\/?$/.exec(listener)
  const port = m === null ? Number.NaN : Number(m[3])
  if (m === null || port > 65535) return `--listener '${listener}' is not of the form http://host:port`
  return {
    bootstrapServers: bootstrap
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
    listener: { host: m[1] ?? m[2]!, port },
    ...(commandConfig !== undefined ? { commandConfig } : {}),
  }
}

/** Runs `topograph console`; resolves with the exit status after a stop signal. */
export async function runConsoleCommand(argv: readonly string[], io: ConsoleCommandIo): Promise<number> {
  const args = parseConsoleArgs(argv)
  if (args === 'help') {
    io.stdout(`${CONSOLE_USAGE}\n`)
    return 0
  }
  if (typeof args === 'string') {
    io.stderr(`topograph console: ${args}\n\n${CONSOLE_USAGE}\n`)
    return 2
  }
  let security: KafkaSecurityConfig = {}
  let clientId: string | undefined
  if (args.commandConfig !== undefined) {
    try {
      const loaded = loadCommandConfig(args.commandConfig)
      security = loaded.security
      resolveSecurity(security) // refuses unusable keys here, with the option named
      clientId = loaded.properties.get('client.id')
    } catch (e) {
      io.stderr(`topograph console: --command-config: ${e instanceof Error ? e.message : String(e)}\n`)
      return 1
    }
  }
  let wake: (() => void) | null = null
  let stopped = false
  const removeHandler = io.onStopSignal(() => {
    stopped = true
    wake?.()
  })
  try {
    let running: Awaited<ReturnType<typeof startConsole>>
    try {
      running = await startConsole({
        bootstrapServers: args.bootstrapServers,
        listener: args.listener,
        security,
        ...(clientId !== undefined ? { clientId } : {}),
        logger: { warn: (o: object | string, msg?: string) => io.stderr(`${msg ?? JSON.stringify(o)}\n`) },
      })
    } catch (e) {
      const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : ''
      io.stderr(`topograph console: ${e instanceof Error ? e.message : String(e)}${cause}\n`)
      return 1
    }
    io.stdout(`Console for ${args.bootstrapServers.join(',')} at ${running.url}\n`)
    if (!stopped) await new Promise<void>((resolve) => (wake = resolve))
    await running.close()
    return 0
  } finally {
    removeHandler()
  }
}
