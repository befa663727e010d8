/**
 * Kafka's Java Admin client against the Topograph server (java/AdminHarness.java), call by call, next
 * to the same call made with Topograph's admin client: whether Kafka's client accepts the answers
 * (no exception where none is expected, the expected exception otherwise), and whether both clients
 * see the same thing (canonical JSON, see AdminHarness).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import type {
  Admin,
  StreamsGroupDescription,
  StreamsGroupMemberAssignment,
} from '../../src/clients/admin/index.js'
import type { StreamsGroupTopologyDescription, TopologyNode } from '../../src/clients/admin/index.js'
import { ADMIN_HARNESS } from './build.js'
import { GROUPS, type Scenario } from './scenario.js'

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

interface Outcome {
  ok: boolean
  result?: Json
  error?: { class: string; message: string | null }
}

class Harness {
  readonly #proc: ChildProcessWithoutNullStreams
  readonly #waiting: { resolve: (line: string) => void; reject: (e: Error) => void }[] = []
  #buffer = ''
  #stderr = ''
  #failed: Error | null = null

  constructor(classpath: string, bootstrap: string) {
    this.#proc = spawn('java', ['-cp', classpath, ADMIN_HARNESS, bootstrap])
    this.#proc.stdout.setEncoding('utf8')
    this.#proc.stdout.on('data', (chunk: string) => {
      this.#buffer += chunk
      for (let nl = this.#buffer.indexOf('\n'); nl >= 0; nl = this.#buffer.indexOf('\n')) {
        const line = this.#buffer.slice(0, nl)
        this.#buffer = this.#buffer.slice(nl + 1)
        this.#waiting.shift()?.resolve(line)
      }
    })
    this.#proc.stderr.on('data', (d: Buffer) => {
      this.#stderr += d.toString()
    })
    this.#proc.on('exit', (code) => {
      this.#failed = new Error(`the Admin harness exited (${code}):\n${this.#stderr}`)
      for (const w of this.#waiting.splice(0)) w.reject(this.#failed)
    })
  }

  async call(request: Record<string, unknown>): Promise<Outcome> {
    if (this.#failed) throw this.#failed
    const line = await new Promise<string>((resolve, reject) => {
      this.#waiting.push({ resolve, reject })
      this.#proc.stdin.write(`${JSON.stringify(request)}\n`)
    })
    return JSON.parse(line) as Outcome
  }

  get stderr(): string {
    return this.#stderr
  }

  close(): Promise<void> {
    this.#proc.stdin.end()
    return new Promise((resolve) => {
      if (this.#proc.exitCode !== null) resolve()
      else this.#proc.once('exit', () => resolve())
    })
  }
}

// ---------------------------------------------------------------------------------------------
// our admin client's results in the harness's canonical form

const ACL_OPERATIONS = [
  'UNKNOWN',
  'ANY',
  'ALL',
  'READ',
  'WRITE',
  'CREATE',
  'DELETE',
  'ALTER',
  'DESCRIBE',
  'CLUSTER_ACTION',
  'DESCRIBE_CONFIGS',
  'ALTER_CONFIGS',
  'IDEMPOTENT_WRITE',
  'CREATE_TOKENS',
  'DESCRIBE_TOKENS',
  'TWO_PHASE_COMMIT',
]

const sorted = (xs: readonly string[]): string[] => [...new Set(xs)].sort()

function tasks(list: StreamsGroupMemberAssignment['activeTasks']): string {
  return list
    .map((t) => `${t.subtopologyId}:[${[...new Set(t.partitions)].sort((a, b) => a - b).join(', ')}]`)
    .sort()
    .join(' ')
}

const assignment = (a: StreamsGroupMemberAssignment): Json => ({
  active: tasks(a.activeTasks),
  standby: tasks(a.standbyTasks),
  warmup: tasks(a.warmupTasks),
})

function node(n: TopologyNode): Json {
  const base: { [k: string]: Json } = { name: n.name }
  if (n.type === 'source') Object.assign(base, { type: 'source', topics: sorted(n.topics) })
  else if (n.type === 'processor') Object.assign(base, { type: 'processor', stores: sorted(n.stores) })
  else Object.assign(base, { type: 'sink', topic: n.topic })
  return { ...base, successors: sorted(n.successors), predecessors: sorted(n.predecessors) }
}

function topology(t: StreamsGroupTopologyDescription): Json {
  return {
    subtopologies: [...t.subtopologies]
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((s) => ({ id: s.id, nodes: [...s.nodes].sort((a, b) => (a.name < b.name ? -1 : 1)).map(node) })),
    globalStores: [...t.globalStores]
      .sort((a, b) => (a.source.name < b.source.name ? -1 : 1))
      .map((g) => ({ source: node(g.source), processor: node(g.processor) })),
  }
}

function topicInfos(list: StreamsGroupDescription['subtopologies'][number]['stateChangelogTopics']): Json {
  const out: { [k: string]: Json } = {}
  for (const t of [...list].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    out[t.name] = {
      partitions: t.partitions,
      replicationFactor: t.replicationFactor,
      topicConfigs: Object.fromEntries(Object.entries(t.topicConfigs).sort()),
    }
  }
  return out
}

function describe(d: StreamsGroupDescription): Json {
  const ops = d.authorizedOperations
  return {
    groupId: d.groupId,
    state: d.groupState,
    groupEpoch: d.groupEpoch,
    targetAssignmentEpoch: d.targetAssignmentEpoch,
    topologyEpoch: d.topologyEpoch,
    assignorName: d.assignorName,
    coordinator: `${d.coordinator.host}:${d.coordinator.port} (${d.coordinator.nodeId})`,
    // Kafka's admin turns the bit field into AclOperation values (Utils.from32BitField)
    authorizedOperations:
      ops === null || ops === -2147483648
        ? null
        : sorted(ACL_OPERATIONS.filter((_, bit) => (ops & (1 << bit)) !== 0)),
    members: [...d.members]
      .sort((a, b) => (a.memberId < b.memberId ? -1 : 1))
      .map((m) => ({
        memberId: m.memberId,
        memberEpoch: m.memberEpoch,
        instanceId: m.instanceId,
        rackId: m.rackId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        topologyEpoch: m.topologyEpoch,
        processId: m.processId,
        userEndpoint: m.userEndpoint === null ? null : `${m.userEndpoint.host}:${m.userEndpoint.port}`,
        clientTags: Object.fromEntries(Object.entries(m.clientTags).sort()),
        assignment: assignment(m.assignment),
        targetAssignment: assignment(m.targetAssignment),
        isClassic: m.isClassic,
      })),
    subtopologies: [...d.subtopologies]
      .sort((a, b) => (a.subtopologyId < b.subtopologyId ? -1 : 1))
      .map((s) => ({
        subtopologyId: s.subtopologyId,
        sourceTopics: sorted(s.sourceTopics),
        repartitionSinkTopics: sorted(s.repartitionSinkTopics),
        stateChangelogTopics: topicInfos(s.stateChangelogTopics),
        repartitionSourceTopics: topicInfos(s.repartitionSourceTopics),
      })),
    topologyDescriptionStatus: d.topologyDescriptionStatus,
    topologyDescription: d.topologyDescription === null ? null : topology(d.topologyDescription),
  }
}

const GROUP_TYPE_NAMES: Record<string, string> = {
  classic: 'Classic',
  consumer: 'Consumer',
  share: 'Share',
  streams: 'Streams',
}

function errorOutcome(e: unknown): Outcome {
  const x = e as { javaClassName?: string; message?: string }
  return { ok: false, error: { class: x.javaClassName ?? 'Error', message: x.message ?? String(e) } }
}

async function ours(f: () => Promise<Json>): Promise<Outcome> {
  try {
    return { ok: true, result: await f() }
  } catch (e) {
    return errorOutcome(e)
  }
}

async function oursKeyed(keys: readonly string[], get: (k: string) => Promise<Json>): Promise<Outcome> {
  const result: { [k: string]: Json } = {}
  // keys sorted, as AdminHarness sorts them (the order of a Java HashMap is no part of the API)
  for (const k of [...keys].sort()) result[k] = (await ours(() => get(k))) as unknown as Json
  return { ok: true, result }
}

// ---------------------------------------------------------------------------------------------
// the calls

export interface AdminCase {
  readonly id: string
  readonly request: Record<string, unknown>
  /** the same call with Topograph's admin client, in the canonical form; none: Kafka's side only */
  readonly ours?: (admin: Admin) => Promise<Outcome>
  /** what Kafka's client must answer: 'ok', or exception class names per key ('*' for the call) */
  readonly expect: Readonly<Record<string, string>>
  readonly setup?: (s: Scenario) => Promise<void>
}

export interface AdminResult {
  readonly id: string
  readonly request: Record<string, unknown>
  readonly kafka: Outcome
  readonly ours: Outcome | null
  /** Kafka's client answered as expected (accepted the answers, or failed with the expected exception) */
  readonly asExpected: boolean
  readonly expectation: string
  /** Kafka's and our client saw the same (null when there is no counterpart) */
  readonly same: boolean | null
}

const { orders, inventory, nodesc, empty, classic, del } = GROUPS
const UNKNOWN = 'interop-no-such-group'

function listGroupsCase(id: string, types?: string[], states?: string[]): AdminCase {
  return {
    id,
    request: { op: 'listGroups', ...(types ? { types } : {}), ...(states ? { states } : {}) },
    expect: { '*': 'ok' },
    ours: (admin) =>
      ours(async () =>
        (await admin.listGroups({ types, states }))
          .map((g) => ({
            groupId: g.groupId,
            type: g.groupType === null ? null : (GROUP_TYPE_NAMES[g.groupType] ?? g.groupType),
            protocol: g.protocolType,
            state: g.groupState,
          }))
          .sort((a, b) => (a.groupId < b.groupId ? -1 : 1)),
      ),
  }
}

function describeCase(
  id: string,
  groups: string[],
  opts: Record<string, boolean>,
  expect: Record<string, string>,
): AdminCase {
  return {
    id,
    request: { op: 'describeStreamsGroups', groups, ...opts },
    expect,
    ours: (admin) => {
      const r = admin.describeStreamsGroups(groups, opts)
      return oursKeyed(groups, async (g) => describe(await r.get(g)))
    },
  }
}

function offsetsCase(id: string, group: string, expect: string): AdminCase {
  return {
    id,
    request: { op: 'listStreamsGroupOffsets', group },
    expect: { '*': expect },
    ours: (admin) =>
      ours(async () =>
        (await admin.listStreamsGroupOffsets(group)).map((o) => ({
          topic: o.topic,
          partition: o.partition,
          offset: Number(o.offset),
          leaderEpoch: o.leaderEpoch < 0 ? null : o.leaderEpoch,
          metadata: o.metadata,
        })),
      ),
  }
}

export function adminCases(): AdminCase[] {
  const all = [orders, inventory, nodesc, empty]
  const restoreEmpty = (s: Scenario) => s.restoreEmptyGroupOffsets(empty)
  const recreateDel = (s: Scenario) => s.recreateEmptyGroup(del)
  const okAll = Object.fromEntries(all.map((g) => [g, 'ok']))
  return [
    { id: 'describeCluster', request: { op: 'describeCluster' }, expect: { '*': 'ok' } },
    listGroupsCase('listGroups'),
    listGroupsCase('listGroups-streams', ['STREAMS']),
    listGroupsCase('listGroups-classic', ['CLASSIC']),
    listGroupsCase('listGroups-consumer', ['CONSUMER']),
    listGroupsCase('listGroups-streams-stable', ['STREAMS'], ['Stable']),
    listGroupsCase('listGroups-streams-empty', ['STREAMS'], ['Empty']),
    describeCase('describeStreamsGroups', all, {}, okAll),
    describeCase('describeStreamsGroups-topology', all, { includeTopologyDescription: true }, okAll),
    describeCase(
      'describeStreamsGroups-topology-authorized-operations',
      [orders],
      { includeTopologyDescription: true, includeAuthorizedOperations: true },
      { [orders]: 'ok' },
    ),
    describeCase(
      'describeStreamsGroups-unknown-and-classic',
      [UNKNOWN, classic],
      { includeTopologyDescription: true },
      {
        [UNKNOWN]: 'org.apache.kafka.common.errors.GroupIdNotFoundException',
        [classic]: 'org.apache.kafka.common.errors.GroupIdNotFoundException',
      },
    ),
    offsetsCase('listStreamsGroupOffsets-live', orders, 'ok'),
    offsetsCase('listStreamsGroupOffsets-empty', empty, 'ok'),
    offsetsCase('listStreamsGroupOffsets-unknown', UNKNOWN, 'ok'),
    {
      id: 'listStreamsGroupOffsets-partitions',
      request: {
        op: 'listStreamsGroupOffsets',
        group: orders,
        partitions: [
          ['orders', 0],
          ['orders', 2],
          ['customers', 1],
        ],
      },
      expect: { '*': 'ok' },
    },
    {
      id: 'listOffsets-earliest',
      request: {
        op: 'listOffsets',
        spec: 'earliest',
        partitions: [
          ['orders', 0],
          ['orders', 1],
          ['payments', 1],
        ],
      },
      expect: { '*': 'ok' },
    },
    {
      id: 'listOffsets-latest',
      request: {
        op: 'listOffsets',
        spec: 'latest',
        partitions: [
          ['orders', 0],
          ['orders', 1],
          ['payments', 1],
        ],
      },
      expect: { '*': 'ok' },
    },
    {
      id: 'alterStreamsGroupOffsets-empty',
      request: { op: 'alterStreamsGroupOffsets', group: empty, offsets: [['payments', 0, 6]] },
      expect: { '*': 'ok' },
      setup: restoreEmpty,
      ours: (admin) =>
        ours(async () => {
          await admin.alterStreamsGroupOffsets(empty, [{ topic: 'payments', partition: 0, offset: 6n }]).all()
          return null
        }),
    },
    {
      id: 'alterStreamsGroupOffsets-live',
      request: { op: 'alterStreamsGroupOffsets', group: orders, offsets: [['orders', 0, 1]] },
      expect: { '*': 'org.apache.kafka.common.errors.UnknownMemberIdException' },
      ours: (admin) =>
        ours(async () => {
          await admin.alterStreamsGroupOffsets(orders, [{ topic: 'orders', partition: 0, offset: 1n }]).all()
          return null
        }),
    },
    {
      id: 'deleteStreamsGroupOffsets-empty',
      request: { op: 'deleteStreamsGroupOffsets', group: empty, partitions: [['payments', 1]] },
      expect: { '*': 'ok' },
      setup: restoreEmpty,
      ours: (admin) =>
        ours(async () => {
          await admin.deleteStreamsGroupOffsets(empty, [{ topic: 'payments', partition: 1 }]).all()
          return null
        }),
    },
    {
      id: 'deleteStreamsGroupOffsets-live',
      request: { op: 'deleteStreamsGroupOffsets', group: orders, partitions: [['orders', 0]] },
      expect: { '*': 'org.apache.kafka.common.errors.GroupSubscribedToTopicException' },
      ours: (admin) =>
        ours(async () => {
          await admin.deleteStreamsGroupOffsets(orders, [{ topic: 'orders', partition: 0 }]).all()
          return null
        }),
    },
    {
      id: 'deleteStreamsGroups',
      request: { op: 'deleteStreamsGroups', groups: [del, orders, UNKNOWN, classic] },
      // deleteStreamsGroups is DeleteGroups, which takes any group type: an Empty classic group is
      // deleted (a Kafka broker does the same); kafka-streams-groups checks the type first
      expect: {
        [del]: 'ok',
        [orders]: 'org.apache.kafka.common.errors.GroupNotEmptyException',
        [UNKNOWN]: 'org.apache.kafka.common.errors.GroupIdNotFoundException',
        [classic]: 'ok',
      },
      setup: async (s) => {
        await recreateDel(s)
        await s.ensureClassicGroup()
      },
      ours: (admin) => {
        const groups = [del, orders, UNKNOWN, classic]
        const r = admin.deleteGroups(groups)
        return oursKeyed(groups, async (g) => {
          await r.get(g)
          return null
        })
      },
    },
  ]
}

function outcomeMatches(o: Outcome, expect: Readonly<Record<string, string>>): boolean {
  const kind = (x: Outcome) => (x.ok ? 'ok' : (x.error?.class ?? '?'))
  if ('*' in expect) return kind(o) === expect['*']
  if (!o.ok || o.result === null || typeof o.result !== 'object' || Array.isArray(o.result)) return false
  const byKey = o.result as Record<string, unknown>
  return Object.entries(expect).every(([k, v]) => byKey[k] !== undefined && kind(byKey[k] as Outcome) === v)
}

export async function runAdminCases(
  classpath: string,
  scenario: Scenario,
  only: (id: string) => boolean,
): Promise<{ results: AdminResult[]; harnessStderr: string }> {
  // the CLI cases may have deleted these
  await scenario.recreateEmptyGroup(empty)
  await scenario.ensureClassicGroup()
  const harness = new Harness(classpath, scenario.bootstrap)
  const results: AdminResult[] = []
  try {
    for (const c of adminCases()) {
      if (!only(c.id)) continue
      await c.setup?.(scenario)
      const kafka = await harness.call(c.request)
      await c.setup?.(scenario)
      const mine = c.ours === undefined ? null : await c.ours(scenario.admin)
      results.push({
        id: c.id,
        request: c.request,
        kafka,
        ours: mine,
        asExpected: outcomeMatches(kafka, c.expect),
        expectation: Object.entries(c.expect)
          .map(([k, v]) => (k === '*' ? v : `${k}: ${v}`))
          .join(', '),
        same: mine === null ? null : JSON.stringify(kafka) === JSON.stringify(mine),
      })
    }
  } finally {
    await harness.close()
  }
  return { results, harnessStderr: harness.stderr }
}
