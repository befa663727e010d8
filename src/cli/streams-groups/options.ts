/**
 * Option parsing and validation for `kafka-streams-groups`, with Kafka's option names, help texts
 * and validation messages (StreamsGroupCommandOptions).
 */
import { formatHelp } from './help-formatter.js'

export interface OptionSpec {
  readonly name: string
  readonly doc: string
  /** 'none' = a flag; 'required' = takes a value; 'optional' = value may follow with `=` */
  readonly arg: 'none' | 'required' | 'optional'
  readonly argName?: string
  /** the option is only allowed when one of these is present (joptsimple availableIf) */
  readonly availableIf?: readonly string[]
  readonly defaultValue?: string
  /** the argument's type as the help names it (Kafka's `ofType`); `String` when absent */
  readonly argType?: 'Long'
  /** a Topograph addition, left out of the help so that it stays Kafka's */
  readonly hidden?: boolean
}

export const OPTIONS: readonly OptionSpec[] = [
  {
    name: 'bootstrap-server',
    doc: 'REQUIRED: The server(s) to connect to.',
    arg: 'required',
    argName: 'server to connect to',
  },
  { name: 'group', doc: 'The streams group id.', arg: 'required', argName: 'group id' },
  {
    name: 'input-topic',
    doc:
      'The input topic whose committed offset should be deleted or reset. ' +
      'In --reset-offsets case, partitions can be specified using this format: `topic:0,1,2`, where 0,1,2 are the partitions to be included. ' +
      'Multiple input topics can be specified. Supported operations: delete-offsets, reset-offsets.',
    arg: 'required',
    argName: 'topic',
  },
  {
    name: 'all-input-topics',
    doc: 'Consider all input topics used in the topology of the group. Supported operations: delete-offsets, reset-offsets.',
    arg: 'none',
  },
  { name: 'all-groups', doc: 'Apply to all streams groups.', arg: 'none' },
  { name: 'list', doc: 'List all streams groups.', arg: 'none' },
  {
    name: 'describe',
    doc: 'Describe streams group and list offset lag related to given group.',
    arg: 'none',
  },
  {
    name: 'delete',
    doc: 'Delete topic partition offsets and ownership information for one or more streams groups.',
    arg: 'none',
  },
  {
    name: 'timeout',
    doc:
      'The timeout that can be set for some use cases. For example, it can be used when describing the group ' +
      'to specify the maximum amount of time in milliseconds to wait before the group stabilizes.',
    arg: 'required',
    argName: 'timeout (ms)',
    argType: 'Long',
    defaultValue: '30000',
  },
  {
    name: 'command-config',
    doc: 'Property file containing configs to be passed to Admin Client.',
    arg: 'required',
    argName: 'command config property file',
  },
  {
    name: 'state',
    doc:
      'When specified with --list, it displays the state of all groups. It can also be used to list groups with specific states. ' +
      'Valid values are Empty, NotReady, Stable, Assigning, Reconciling, and Dead.',
    arg: 'optional',
    availableIf: ['list', 'describe'],
  },
  {
    name: 'members',
    doc: 'Describe members of the group. This option may be used with the --describe option only.',
    arg: 'none',
    availableIf: ['describe'],
  },
  {
    name: 'offsets',
    doc:
      'Describe the group and list all topic partitions in the group along with their offset information.' +
      'This is the default sub-action and may be used with the --describe option only.',
    arg: 'none',
    availableIf: ['describe'],
  },
  {
    name: 'topology',
    doc:
      "Describe the topology of the streams group, as recorded by the broker's topology description plugin. " +
      "This option may be used with the '--describe' option only.",
    arg: 'none',
    availableIf: ['describe'],
  },
  {
    name: 'output',
    doc: "Output format for --describe --topology: text (Kafka's format, the default), json, dot or mermaid.",
    arg: 'required',
    argName: 'format',
    defaultValue: 'text',
    hidden: true,
  },
  {
    name: 'verbose',
    doc:
      'Use with --describe --state to show group epoch and target assignment epoch.\n' +
      'Use with --describe --members to show for each member the member epoch, target assignment epoch, current assignment, target assignment, and whether member is still using the classic rebalance protocol.\n' +
      'Use with --describe --offsets and --describe to show leader epochs for each partition.',
    arg: 'none',
    availableIf: ['describe'],
  },
  {
    name: 'reset-offsets',
    doc:
      'Reset offsets of streams group. The instances should be inactive.\n' +
      'Has 2 execution options: --dry-run to plan which offsets to reset, and --execute to update the offsets.\n' +
      'If you use --execute, all internal topics linked to the group will also be deleted.\n' +
      'Additionally, the --export option can be used to generate the offsets in CSV format for export to a file.\n' +
      'You must choose one of the following reset specifications: --to-datetime, --by-duration, --to-earliest, ' +
      '--to-latest, --shift-by, --from-file, --to-current, --to-offset.\n' +
      'To define the scope, use --all-input-topics or --input-topic. The scope must be specified unless you use --from-file.\n' +
      'Fails if neither --dry-run nor --execute is specified.',
    arg: 'none',
  },
  {
    name: 'delete-offsets',
    doc: 'Delete offsets of streams group. Supports one streams group at a time, and multiple topics.',
    arg: 'none',
  },
  {
    name: 'to-offset',
    doc: 'Reset offsets to a specific offset.',
    arg: 'required',
    argName: 'offset',
    argType: 'Long',
  },
  {
    name: 'from-file',
    doc: 'Reset offsets to values defined in CSV file.',
    arg: 'required',
    argName: 'path to CSV file',
  },
  {
    name: 'to-datetime',
    doc: "Reset offsets to offset from datetime. Format: 'YYYY-MM-DDThh:mm:ss.sss'",
    arg: 'required',
    argName: 'datetime',
  },
  {
    name: 'by-duration',
    doc: "Reset offsets by duration from current timestamp. Format: 'PnDTnHnMnS'",
    arg: 'required',
    argName: 'duration',
  },
  { name: 'to-earliest', doc: 'Reset offsets to earliest offset.', arg: 'none' },
  { name: 'to-latest', doc: 'Reset offsets to latest offset.', arg: 'none' },
  { name: 'to-current', doc: 'Reset offsets to current offset.', arg: 'none' },
  {
    name: 'shift-by',
    doc: "Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.",
    arg: 'required',
    argName: 'number-of-offsets',
    argType: 'Long',
  },
  {
    name: 'delete-internal-topic',
    doc:
      'Delete specified internal topic of the streams group. Supported operation: reset-offsets.' +
      'This option is applicable only when --execute is used.',
    arg: 'required',
  },
  {
    name: 'delete-all-internal-topics',
    doc:
      'Delete all internal topics linked to the streams group. Supported operations: reset-offsets, delete.' +
      'With reset-offsets, this option is applicable only when --execute is used.',
    arg: 'none',
  },
  {
    name: 'dry-run',
    doc: 'Only show results without executing changes on streams group. Supported operation: reset-offsets.',
    arg: 'none',
  },
  {
    name: 'execute',
    doc: 'Execute the offset reset operation. Supported operation: reset-offsets.',
    arg: 'none',
  },
  {
    name: 'export',
    doc: 'Generate offset reset information in CSV format for export to a file. Supported operation: reset-offsets.',
    arg: 'none',
  },
  { name: 'help', doc: 'Print usage information.', arg: 'none' },
  { name: 'version', doc: 'Display Kafka version.', arg: 'none' },
]

/** An OptionException (printed to stderr without the help, exit 1). */
export class OptionError extends Error {
  override name = 'OptionError'
}

/** printUsageAndExit (message and help to stderr, exit 1). */
export class UsageExit extends Error {
  override name = 'UsageExit'
}

export interface ParsedOptions {
  has(name: string): boolean
  valueOf(name: string): string | undefined
  valuesOf(name: string): string[]
}

export function parseOptions(argv: readonly string[]): ParsedOptions {
  const values = new Map<string, Array<string | undefined>>()
  const byName = new Map(OPTIONS.map((o) => [o.name, o]))
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (!arg.startsWith('--')) throw new OptionError(`Found non-option argument '${arg}'`)
    const eq = arg.indexOf('=')
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2)
    const spec = byName.get(name)
    if (spec === undefined) throw new OptionError(`${name} is not a recognized option`)
    let value: string | undefined
    if (eq > 0) {
      if (spec.arg === 'none') throw new OptionError(`Option [${name}] does not take an argument`)
      value = arg.slice(eq + 1)
    } else if (spec.arg === 'required') {
      // As joptsimple, a required argument is the next word, whatever it looks like.
      const next = argv[i + 1]
      if (next === undefined) throw new OptionError(`Option ${name} requires an argument`)
      value = next
      i++
    } else if (spec.arg === 'optional') {
      const next = argv[i + 1]
      if (next !== undefined && !next.startsWith('--')) {
        value = next
        i++
      }
    }
    const list = values.get(name) ?? []
    list.push(value)
    values.set(name, list)
  }
  // availableIf, checked as joptsimple does while parsing.
  const unavailable = OPTIONS.filter(
    (o) => o.availableIf !== undefined && values.has(o.name) && !o.availableIf.some((d) => values.has(d)),
  )
  if (unavailable.length > 0) {
    throw new OptionError(
      `Option(s) [${unavailable.map((o) => o.name).join(', ')}] are unavailable given other options on the command line`,
    )
  }
  return {
    has: (n) => values.has(n),
    valueOf: (n) => values.get(n)?.[0] ?? byName.get(n)?.defaultValue,
    valuesOf: (n) => (values.get(n) ?? []).filter((v): v is string => v !== undefined),
  }
}

/**
 * The option help as Kafka's tool prints it (`parser.printHelpOn`): jopt-simple's layout of
 * Kafka's options, sorted by name; Topograph's own options are left out.
 */
export function helpText(): string {
  return formatHelp(
    OPTIONS.filter((o) => o.hidden !== true).map((o) => ({
      name: o.name,
      description: o.doc,
      argument: o.arg,
      ...(o.argType === undefined ? {} : { argumentType: o.argType }),
      ...(o.argName === undefined ? {} : { argumentDescription: o.argName }),
      ...(o.defaultValue === undefined ? {} : { defaultValues: [o.defaultValue] }),
    })),
  )
}

/** The reset scenarios, in the order Kafka's option set lists them. */
export const RESET_SCENARIOS = [
  'to-offset',
  'shift-by',
  'to-datetime',
  'by-duration',
  'to-earliest',
  'to-latest',
  'to-current',
  'from-file',
] as const

/** Kafka's checkArgs (StreamsGroupCommandOptions), in its order: throws UsageExit with Kafka's message. */
export function checkArgs(o: ParsedOptions): void {
  if (!o.has('bootstrap-server')) throw new UsageExit('Missing required argument "[bootstrap-server]"')
  const groupScope = '[all-groups], [group]'
  const invalid = (opt: string, others: readonly string[]): void => {
    if (!o.has(opt)) return
    const hit = others.find((x) => o.has(x))
    if (hit !== undefined) throw new UsageExit(`Option "[${opt}]" can't be used with option "[${hit}]"`)
  }
  if (o.has('describe')) {
    if (!o.has('group') && !o.has('all-groups')) {
      throw new UsageExit(`Option [describe] takes one of these options: ${groupScope}`)
    }
    if (['members', 'offsets', 'state', 'topology'].filter((n) => o.has(n)).length > 1) {
      throw new UsageExit(
        'Option [describe] takes at most one of these options: [members], [offsets], [state], [topology]',
      )
    }
    if (o.has('state') && o.valueOf('state') !== undefined) {
      throw new UsageExit('Option [describe] does not take a value for [state]')
    }
  }
  if (o.has('delete')) {
    if (!o.has('group') && !o.has('all-groups')) {
      throw new UsageExit(`Option [delete] takes one of these options: ${groupScope}`)
    }
    if (o.has('input-topic') || o.has('all-input-topics')) {
      throw new UsageExit(
        'Kafka Streams does not support topic-specific offset deletion from a streams group.',
      )
    }
  }
  if (o.has('delete-offsets')) {
    if ((!o.has('input-topic') && !o.has('all-input-topics')) || !o.has('group')) {
      throw new UsageExit(
        'Option [delete-offsets] takes the [group] and one of these options: [all-input-topics], [input-topic]',
      )
    }
    const groups = o.valuesOf('group')
    if (groups.length > 1) {
      throw new UsageExit(
        `Option [delete-offsets] supports only one [group] at a time, but found: [${groups.join(', ')}]`,
      )
    }
  }
  if (o.has('reset-offsets')) {
    if (o.has('dry-run') && o.has('execute')) {
      throw new UsageExit('Option [reset-offsets] only accepts one of [execute] and [dry-run]')
    }
    if (!o.has('dry-run') && !o.has('execute')) {
      throw new UsageExit('Option [reset-offsets] takes the option: [execute] or [dry-run]')
    }
    if (!o.has('group') && !o.has('all-groups')) {
      throw new UsageExit(`Option [reset-offsets] takes one of these options: ${groupScope}`)
    }
    for (const s of [
      'to-offset',
      'to-datetime',
      'by-duration',
      'to-earliest',
      'to-latest',
      'to-current',
      'shift-by',
      'from-file',
    ]) {
      invalid(
        s,
        RESET_SCENARIOS.filter((x) => x !== s),
      )
    }
  }
  if (o.has('delete-all-internal-topics')) {
    if (!o.has('reset-offsets') && !o.has('delete')) {
      throw new UsageExit(
        'Option [delete-all-internal-topics] takes one of these options: [delete], [reset-offsets]',
      )
    }
    if (o.has('reset-offsets') && !o.has('execute')) {
      throw new UsageExit('Option [delete-all-internal-topics] takes [execute] when [reset-offsets] is used.')
    }
  } else if (o.has('delete-internal-topic') && (!o.has('reset-offsets') || !o.has('execute'))) {
    throw new UsageExit('Option [delete-internal-topic] takes [reset-offsets] when [execute] is used.')
  }
  if ((o.has('dry-run') || o.has('execute')) && !o.has('reset-offsets')) {
    throw new UsageExit('Only Option [reset-offsets] accepts [execute] or [dry-run]')
  }
  invalid('list', ['members', 'offsets', 'topology'])
  invalid('group', ['all-groups'])
  invalid('group', ['list'])
  invalid('input-topic', ['list', 'describe', 'delete'])
  const output = o.valueOf('output')!
  if (!['text', 'json', 'dot', 'mermaid'].includes(output)) {
    throw new UsageExit(`Option [output] must be one of text, json, dot, mermaid; got '${output}'`)
  }
  if (o.has('output') && !o.has('topology')) {
    throw new UsageExit('Option [output] may be used with --describe --topology only')
  }
}

/** The typed option values Kafka converts when its command service starts. */
export interface ServiceValues {
  /** `--timeout` as the int passed to every admin call */
  readonly timeoutMs: number
  /** the first `--to-offset` */
  readonly toOffset: bigint | null
  readonly shiftBy: bigint | null
}

/**
 * Kafka converts `--to-offset`, `--shift-by` and `--timeout` (Long options) when its service is
 * created, for every action; a value that is not a long, or a second value where one is read, is
 * joptsimple's OptionException, printed with the help.
 */
export function serviceValues(o: ParsedOptions): ServiceValues {
  const single = (name: string): string | undefined => {
    const values = o.valuesOf(name)
    if (values.length > 1) {
      throw new UsageExit(`Found multiple arguments for option ${name}, but you asked for only one`)
    }
    return values[0] ?? o.valueOf(name)
  }
  const long = (name: string, v: string): bigint => {
    if (!/^[+-]?[0-9]+$/.test(v) || BigInt(v) !== BigInt.asIntN(64, BigInt(v))) {
      throw new UsageExit(`Cannot parse argument '${v}' of option ${name}`)
    }
    return BigInt(v)
  }
  const toOffsets = o.valuesOf('to-offset').map((v) => long('to-offset', v))
  single('by-duration')
  const shift = single('shift-by')
  const shiftBy = shift === undefined ? null : long('shift-by', shift)
  const timeout = long('timeout', single('timeout')!)
  return { timeoutMs: Number(BigInt.asIntN(32, timeout)), toOffset: toOffsets[0] ?? null, shiftBy }
}

/** Parses a Java .properties text (`key=value`, `key: value`, `key value`, `#`/`!` comments, `\` continuations). */
export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>()
  const physical = text.split(/\r\n|\r|\n/)
  for (let i = 0; i < physical.length; i++) {
    let line = physical[i]!.replace(/^[ \t\f]+/, '')
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < physical.length) {
      line = line.slice(0, -1) + physical[++i]!.replace(/^[ \t\f]+/, '')
    }
    const m = /^((?:\\.|[^=:\s\\])*)\s*[=:\s]?\s*(.*)$/.exec(line)!
    const unescapeKey = (s: string): string =>
      s.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, c: string) =>
        c.length === 5
          ? String.fromCharCode(Number.parseInt(c.slice(1), 16))
          : c === 'n'
            ? '\n'
            : c === 't'
              ? '\t'
              : c,
      )
    out.set(unescapeKey(m[1]!), unescapeKey(m[2]!))
  }
  return out
}
