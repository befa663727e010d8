#!/usr/bin/env node
/**
 * kafka-streams-groups: list, describe and delete streams groups and manage their offsets
 * (`--describe --offsets` with lag, `--reset-offsets`, `--delete-offsets`), with Kafka's flags,
 * messages, output formats and exit codes. `--describe --topology` prints the description a
 * broker's topology description plugin recorded, byte-identical to Kafka's tool;
 * `--output json|dot|mermaid` is a Topograph addition.
 */
import { isEntryPoint } from './entry-point.js'
import { Admin, type GroupListing, type StreamsGroupDescription } from '../clients/admin/index.js'
import { javaHashOrder, javaStringHash } from '../java-order.js'
import { KafkaError } from '../clients/network/errors.js'
import type { KafkaSecurityConfig } from '../clients/network/security.js'
import { CommandConfigReadError, loadCommandConfig } from './streams-groups/command-config.js'
import { deleteGroups } from './streams-groups/delete-groups.js'
import { deleteOffsets } from './streams-groups/delete-offsets.js'
import { printOffsets } from './streams-groups/describe-offsets.js'
import {
  type CommandContext,
  getOrRuntime,
  type Io,
  JavaThrowable,
  javaStackOf,
  printError,
} from './streams-groups/io.js'
import { exportOffsetsToCsv, formatOffsetsToReset, resetOffsets } from './streams-groups/reset-offsets.js'
import {
  formatTopologyDot,
  formatTopologyJson,
  formatTopologyMermaid,
  formatTopologyText,
} from './streams-groups/formatter.js'
import {
  checkArgs,
  helpText,
  OptionError,
  type ParsedOptions,
  parseOptions,
  serviceValues,
  UsageExit,
} from './streams-groups/options.js'

export type { Io } from './streams-groups/io.js'

const processIo: Io = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
}

const DESCRIPTION = 'This tool helps to list, describe, delete and manage the offsets of streams groups.'

// Admin configs from --command-config that this client understands: client.id, the timeouts and
// back-offs, and the security keys (security.protocol, sasl.*, ssl.*).
function adminConfig(o: ParsedOptions): KafkaSecurityConfig & {
  clientId?: string
  requestTimeoutMs?: number
  retryBackoffMs?: number
  retryBackoffMaxMs?: number
} {
  const file = o.valueOf('command-config')
  if (file === undefined) return {}
  let loaded: ReturnType<typeof loadCommandConfig>
  try {
    loaded = loadCommandConfig(file)
  } catch (e) {
    // Kafka's service: `catch (IOException e) { throw new RuntimeException(e) }`
    if (e instanceof CommandConfigReadError)
      throw new JavaThrowable(e.javaException, e, 'java.lang.RuntimeException')
    throw e
  }
  const { properties: props, security } = loaded
  const num = (k: string): number | undefined => {
    const v = props.get(k)
    if (v === undefined) return undefined
    const n = Number(v)
    if (!Number.isInteger(n) || n < 0) {
      throw new KafkaError(`Invalid value ${v} for configuration ${k}: Not a number of type INT`, {
        javaClassName: 'org.apache.kafka.common.config.ConfigException',
      })
    }
    return n
  }
  const out: ReturnType<typeof adminConfig> = { ...security }
  const clientId = props.get('client.id')
  if (clientId !== undefined) out.clientId = clientId
  const rt = num('request.timeout.ms')
  if (rt !== undefined) out.requestTimeoutMs = rt
  const rb = num('retry.backoff.ms')
  if (rb !== undefined) out.retryBackoffMs = rb
  const rbm = num('retry.backoff.max.ms')
  if (rbm !== undefined) out.retryBackoffMaxMs = rbm
  return out
}

function tasksText(a: StreamsGroupDescription['members'][number]['assignment'], kind: string): string {
  const part = (
    tasks: readonly { subtopologyId: string; partitions: readonly number[] }[],
    label: string,
  ): string =>
    tasks.length === 0
      ? ''
      : `${label}: ${tasks.map((t) => `${t.subtopologyId}:[${t.partitions.join(',')}]; `).join('')}`
  return (
    part(a.activeTasks, `${kind}ACTIVE`) +
    part(a.standbyTasks, `${kind}STANDBY`) +
    part(a.warmupTasks, `${kind}WARMUP`)
  )
}

const pad = (s: string | number, w: number): string => String(s).padEnd(w)

function maybePrintEmptyGroupState(io: Io, d: StreamsGroupDescription): void {
  if (d.groupState === 'Dead') printError(io, `Streams group '${d.groupId}' does not exist.`)
  else if (d.groupState === 'Empty') printError(io, `Streams group '${d.groupId}' has no active members.`)
}

function printTopology(io: Io, d: StreamsGroupDescription, output: string): boolean {
  switch (d.topologyDescriptionStatus) {
    case 'AVAILABLE': {
      const t = d.topologyDescription!
      const text =
        output === 'json'
          ? formatTopologyJson(d.groupId, t)
          : output === 'dot'
            ? formatTopologyDot(d.groupId, t)
            : output === 'mermaid'
              ? formatTopologyMermaid(d.groupId, t)
              : formatTopologyText(t)
      // Kafka prints the formatted string with println, so one more newline follows.
      io.out(`${text}\n`)
      return true
    }
    case 'NOT_STORED':
      printError(io, `No topology description is stored for streams group '${d.groupId}'.`)
      return false
    case 'ERROR':
      printError(
        io,
        `The broker failed to fetch the topology description for streams group '${d.groupId}'. See the broker logs for details.`,
      )
      return false
    default:
      printError(
        io,
        `No topology description is available for streams group '${d.groupId}' (status: ${d.topologyDescriptionStatus}).`,
      )
      return false
  }
}

function printMembers(io: Io, d: StreamsGroupDescription, verbose: boolean): void {
  if (d.groupState === 'Dead' || d.members.length === 0) return
  maybePrintEmptyGroupState(io, d)
  const gl = Math.max(15, d.groupId.length)
  const ml = Math.max(15, ...d.members.map((m) => m.memberId.length))
  const hl = Math.max(15, ...d.members.map((m) => m.processId.length))
  const cl = Math.max(15, ...d.members.map((m) => m.clientId.length))
  if (!verbose) {
    const row = (a: string, b: string, c: string, e: string, f: string) =>
      `${pad(a, gl)} ${pad(b, ml)} ${pad(c, hl)} ${pad(e, cl)} ${f}\n`
    io.out(row('GROUP', 'MEMBER', 'PROCESS', 'CLIENT-ID', 'ASSIGNMENTS'))
    for (const m of d.members)
      io.out(row(d.groupId, m.memberId, m.processId, m.clientId, tasksText(m.assignment, '')))
  } else {
    const row = (cols: ReadonlyArray<string | number>, last: string) =>
      `${pad(cols[0]!, gl)} ${pad(cols[1]!, 25)} ${pad(cols[2]!, 15)}${pad(cols[3]!, ml)} ${pad(cols[4]!, 15)} ${pad(cols[5]!, 15)} ${pad(cols[6]!, hl)} ${pad(cols[7]!, cl)} ${last}\n`
    io.out(
      row(
        [
          'GROUP',
          'TARGET-ASSIGNMENT-EPOCH',
          'TOPOLOGY-EPOCH',
          'MEMBER',
          'MEMBER-PROTOCOL',
          'MEMBER-EPOCH',
          'PROCESS',
          'CLIENT-ID',
        ],
        'ASSIGNMENTS',
      ),
    )
    for (const m of d.members) {
      io.out(
        row(
          [
            d.groupId,
            d.targetAssignmentEpoch,
            d.topologyEpoch,
            m.memberId,
            m.isClassic ? 'classic' : 'streams',
            m.memberEpoch,
            m.processId,
            m.clientId,
          ],
          tasksText(m.assignment, '') + tasksText(m.targetAssignment, 'TARGET-'),
        ),
      )
    }
  }
}

function printState(io: Io, d: StreamsGroupDescription, verbose: boolean): void {
  maybePrintEmptyGroupState(io, d)
  const gl = Math.max(15, d.groupId.length)
  const coordinator = `${d.coordinator.host}:${d.coordinator.port} (${d.coordinator.nodeId})`
  const cl = Math.max(25, coordinator.length)
  const assignor = d.assignorName ?? ''
  const al = Math.max(15, assignor.length)
  if (!verbose) {
    const row = (a: string, b: string, c: string, e: string, f: string | number) =>
      `${pad(a, gl)} ${pad(b, cl)} ${pad(c, al)} ${pad(e, 25)} ${f}\n`
    io.out(row('GROUP', 'COORDINATOR (ID)', 'ASSIGNOR', 'STATE', '#MEMBERS'))
    io.out(row(d.groupId, coordinator, assignor, d.groupState, d.members.length))
  } else {
    const row = (c: ReadonlyArray<string | number>, last: string | number) =>
      `${pad(c[0]!, gl)} ${pad(c[1]!, cl)} ${pad(c[2]!, al)} ${pad(c[3]!, 25)} ${pad(c[4]!, 15)} ${pad(c[5]!, 25)} ${last}\n`
    io.out(
      row(
        ['GROUP', 'COORDINATOR (ID)', 'ASSIGNOR', 'STATE', 'GROUP-EPOCH', 'TARGET-ASSIGNMENT-EPOCH'],
        '#MEMBERS',
      ),
    )
    io.out(
      row(
        [d.groupId, coordinator, assignor, d.groupState, d.groupEpoch, d.targetAssignmentEpoch],
        d.members.length,
      ),
    )
  }
}

/**
 * The listings in the order Kafka's admin client returns them: it collects the ListGroups answers
 * in a `HashMap` keyed by group id (a later listing of an id replaces the earlier one in its place)
 * and returns the map's values, so groups come out in Java hash order of their ids.
 */
function inListGroupsOrder(groups: readonly GroupListing[]): GroupListing[] {
  const byId = new Map<string, GroupListing>()
  for (const g of groups) byId.set(g.groupId, g)
  return javaHashOrder([...byId.values()], (g) => javaStringHash(g.groupId))
}

/**
 * ListGroups for streams groups as Kafka's admin client fails it: refused credentials stop its
 * first step (finding the brokers), whose failure it reports as
 * `KafkaException: Failed to find brokers to send ListGroups` caused by the authentication error.
 */
async function listStreamsGroupListings(
  admin: Admin,
  timeoutMs: number,
  states?: string[],
): Promise<GroupListing[]> {
  try {
    return inListGroupsOrder(
      await admin.listGroups(
        states === undefined ? { types: ['streams'], timeoutMs } : { types: ['streams'], states, timeoutMs },
      ),
    )
  } catch (e) {
    if (e instanceof KafkaError && e.javaClassName.endsWith('AuthenticationException')) {
      throw new KafkaError('Failed to find brokers to send ListGroups', {
        javaClassName: 'org.apache.kafka.common.KafkaException',
        cause: e,
      })
    }
    throw e
  }
}

/** Kafka's `listStreamsGroups`: a failure is rethrown as `new RuntimeException(executionException)`. */
async function listStreamsGroupIds(admin: Admin, timeoutMs: number): Promise<string[]> {
  return (await getOrRuntime(listStreamsGroupListings(admin, timeoutMs))).map((g) => g.groupId)
}

/** The states a streams group can be in, in the order Kafka's message lists them. */
const STREAMS_GROUP_STATES = ['Empty', 'NotReady', 'Dead', 'Stable', 'Reconciling', 'Assigning'] as const

/** Java's `String.split(",")`: trailing empty strings are dropped. */
function javaSplitComma(s: string): string[] {
  const parts = s.split(',')
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop()
  return parts
}

/** Java's `String.trim()`: code units up to U+0020 off both ends. */
function javaTrim(s: string): string {
  let a = 0
  let b = s.length
  while (a < b && s.charCodeAt(a) <= 0x20) a++
  while (b > a && s.charCodeAt(b - 1) <= 0x20) b--
  return s.slice(a, b)
}

/**
 * Kafka's `groupStatesFromString`: comma-separated, each part trimmed and looked up without regard
 * to case (`GroupState.parse`; an unknown name is `Unknown`); every state must be one a streams
 * group can be in, or the command fails with the usage. Returns the states' names, each once.
 */
function groupStatesFromString(input: string): string[] {
  const parsed = new Set<string>()
  let valid = true
  for (const part of javaSplitComma(input)) {
    const name = javaTrim(part).toUpperCase()
    const state = STREAMS_GROUP_STATES.find((x) => x.toUpperCase() === name)
    if (state === undefined) valid = false
    else parsed.add(state)
  }
  if (!valid) {
    throw new UsageExit(`Invalid state list '${input}'. Valid states are: ${STREAMS_GROUP_STATES.join(', ')}`)
  }
  return [...parsed]
}

async function run(o: ParsedOptions, io: Io): Promise<number> {
  // Kafka's service reads the command config, then converts the typed options, for every action.
  const config = adminConfig(o)
  const values = serviceValues(o)
  const timeoutMs = values.timeoutMs
  const admin = Admin.create({
    bootstrapServers: o.valueOf('bootstrap-server')!,
    defaultApiTimeoutMs: timeoutMs,
    ...config,
  })
  const ctx: CommandContext = { o, admin, io, timeoutMs }
  try {
    if (o.has('list')) {
      if (o.has('state')) {
        const v = o.valueOf('state')
        const states = v === undefined || v === '' ? [] : groupStatesFromString(v)
        const groups = await listStreamsGroupListings(admin, timeoutMs, states)
        const gl = Math.max(15, ...groups.map((g) => g.groupId.length))
        io.out(`${pad('GROUP', gl)} STATE\n`)
        for (const g of groups) io.out(`${pad(g.groupId, gl)} ${g.groupState ?? 'Unknown'}\n`)
      } else {
        for (const id of await listStreamsGroupIds(admin, timeoutMs)) io.out(`${id}\n`)
      }
      return 0
    }
    if (o.has('describe')) {
      const groupIds = o.has('all-groups') ? await listStreamsGroupIds(admin, timeoutMs) : o.valuesOf('group')
      const topology = o.has('topology')
      let exit = 0
      for (const g of groupIds) {
        const d = await admin
          .describeStreamsGroups([g], { includeTopologyDescription: topology, timeoutMs })
          .get(g)
        if (topology) {
          if (!printTopology(io, d, o.valueOf('output')!)) exit = 1
        } else if (o.has('members')) printMembers(io, d, o.has('verbose'))
        else if (o.has('state')) printState(io, d, o.has('verbose'))
        else await printOffsets(ctx, d, o.has('verbose'))
      }
      return exit
    }
    if (o.has('reset-offsets')) {
      const result = await resetOffsets(ctx, values)
      if (o.has('export')) io.out(`${exportOffsetsToCsv(result, o.valuesOf('group').length === 1)}\n`)
      else io.out(formatOffsetsToReset(result))
      return 0
    }
    if (o.has('delete-offsets')) {
      await deleteOffsets(ctx)
      return 0
    }
    await deleteGroups(ctx)
    // Kafka's tool exits 0 after --delete even when deletions failed.
    return 0
  } finally {
    await admin.close()
  }
}

/** Runs the command; resolves with the exit code. */
export async function execute(argv: readonly string[], io: Io = processIo): Promise<number> {
  let parsed: ParsedOptions | null = null
  try {
    parsed = parseOptions(argv)
    // Kafka's CommandLineUtils.printUsageAndExit: the description and the help on stderr, exit 1.
    if (argv.length === 0 || parsed.has('help')) throw new UsageExit(DESCRIPTION)
    if (parsed.has('version')) {
      io.out('topograph kafka-streams-groups 0.1.0\n')
      return 0
    }
    checkArgs(parsed)
    const actions = ['list', 'describe', 'reset-offsets', 'delete', 'delete-offsets'].filter((a) =>
      parsed!.has(a),
    )
    if (actions.length !== 1) {
      throw new UsageExit(
        'Command must include exactly one action: --list, --describe, --delete, --reset-offsets, or --delete-offsets.',
      )
    }
    return await run(parsed, io)
  } catch (e) {
    if (e instanceof OptionError) {
      io.err(`${e.message}\n`)
      return 1
    }
    if (e instanceof UsageExit) {
      io.err(`${e.message}\n${helpText()}`)
      return 1
    }
    // An admin failure is Kafka's ExecutionException, whose message is the cause's toString();
    // a JavaThrowable carries the message Kafka's own exception would have.
    const text =
      e instanceof JavaThrowable
        ? e.message
        : e instanceof KafkaError
          ? e.toString()
          : e instanceof Error
            ? `${e.name}: ${e.message}`
            : String(e)
    printError(io, `Executing streams group command failed due to ${text}`)
    io.err(`${javaStackOf(e)}\n`)
    return 1
  }
}

if (isEntryPoint(import.meta.url)) {
  execute(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code
    },
    (e: unknown) => {
      process.stderr.write(`${String(e)}\n`)
      process.exitCode = 1
    },
  )
}
