// Command-line parsing for `topograph start` (the `console` and `demo` subcommands parse their own).
import { LocalError } from '../errors.js'

export const USAGE = `Usage: topograph <command> [options]

Commands:
  start      Run the server in the foreground until SIGTERM or SIGINT.
  console    Serve the web console against any cluster (topograph console --help).
  demo       Run sample streams applications against a cluster (topograph demo --help).

Options for start:
  --config FILE           Read configuration from a Java .properties file.
  --override key=value    Set one configuration key; may be repeated. Wins over the file and
                          over TOPOGRAPH_* environment variables.
  --demo                  Also run the sample streams applications of \`topograph demo\` against
                          this server, so the console has topologies to draw.

Other:
  --help, -h              Show this text.
  --version, -V           Show the version.

Configuration keys and their defaults: docs/configuration.md`

export type Command =
  | {
      readonly command: 'start'
      readonly configFile: string | undefined
      readonly overrides: readonly string[]
      readonly demo: boolean
    }
  | { readonly command: 'help' }
  | { readonly command: 'version' }

/** A command line that cannot be understood; the CLI prints the message and the usage, exit 2. */
export class UsageError extends LocalError {
  constructor(message: string) {
    super('CLI_USAGE', message)
    this.name = 'UsageError'
  }
}

/** Parses the arguments after the program name. */
export function parseArgs(argv: readonly string[]): Command {
  if (argv.length === 0) throw new UsageError('no command given')
  const [first, ...rest] = argv
  if (first === '--help' || first === '-h' || first === 'help') return { command: 'help' }
  if (first === '--version' || first === '-V') return { command: 'version' }
  if (first !== 'start') throw new UsageError(`unknown command '${first}'`)

  let configFile: string | undefined
  let demo = false
  const overrides: string[] = []
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]
    if (arg === '--help' || arg === '-h') return { command: 'help' }
    // Both `--name value` and `--name=value`.
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1
    const name = eq > 0 ? arg.slice(0, eq) : arg
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined
    const takeValue = (): string => {
      if (inline !== undefined) return inline
      const next = rest[i + 1]
      if (next === undefined || next.startsWith('--')) throw new UsageError(`${name} needs a value`)
      i++
      return next
    }
    if (name === '--config') {
      if (configFile !== undefined) throw new UsageError('--config may be given only once')
      configFile = takeValue()
      if (configFile === '') throw new UsageError('--config needs a file name')
    } else if (name === '--override') {
      const value = takeValue()
      if (value.indexOf('=') <= 0) throw new UsageError(`--override '${value}' is not of the form key=value`)
      overrides.push(value)
    } else if (arg === '--demo') {
      demo = true
    } else {
      throw new UsageError(`unknown option '${arg}' for start`)
    }
  }
  return { command: 'start', configFile, overrides, demo }
}
