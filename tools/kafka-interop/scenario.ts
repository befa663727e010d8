/**
 * The server state both tools are run against: a real `topograph start` child process (memory storage,
 * the `memory` topology description plugin, one standby replica per stateful task) with streams groups
 * whose live members (Topograph's StreamsMember) pushed their topology descriptions:
 *
 * | group               | members | what it shows                                                        |
 * |---------------------|---------|----------------------------------------------------------------------|
 * | interop-orders      | 2 live  | repartition + join (two subtopologies), standby tasks, offsets        |
 * | interop-inventory   | 1 live  | global store, dynamic sink, user endpoint, rack, client tags          |
 * | interop-nodesc      | 1 live  | topology.description.push.enabled=false: NOT_STORED                   |
 * | interop-empty       | none    | Empty after its member left; committed offsets                        |
 * | interop-classic     | —       | a classic group (admin offset commit), which streams commands skip   |
 * | interop-del         | none    | Empty; recreated before every run of a command that deletes it        |
 *
 * Offsets are committed by the live members (OffsetCommit v9 with member id and epoch) and, for empty
 * groups, by the admin client.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inventoryApplication, ordersApplication } from '../../src/cli/demo.js'
import { Admin, type StreamsGroupDescription } from '../../src/clients/admin/index.js'
import { NetworkClient } from '../../src/clients/network/index.js'
import { StreamsMember, Topology } from '../../src/clients/streams/index.js'
import { startTopographProcess, type TopographProcess } from '../../test/helpers/topograph-process.js'

export const GROUPS = {
  orders: 'interop-orders',
  inventory: 'interop-inventory',
  nodesc: 'interop-nodesc',
  empty: 'interop-empty',
  classic: 'interop-classic',
  del: 'interop-del',
} as const

/** Server settings: Kafka's defaults except where noted. */
export const SERVER_SETTINGS: Readonly<Record<string, string>> = {
  'coordinator.storage': 'memory',
  'group.streams.topology.description.plugin.class': 'memory',
  'group.streams.num.standby.replicas': '1',
  'group.streams.initial.rebalance.delay.ms': '0',
  'group.streams.assignment.interval.ms': '0',
}

const TOPICS: readonly { name: string; numPartitions: number }[] = [
  { name: 'orders', numPartitions: 3 },
  { name: 'customers', numPartitions: 3 },
  { name: 'enriched-orders', numPartitions: 3 },
  { name: 'products', numPartitions: 2 },
  { name: 'inventory-berlin', numPartitions: 2 },
  { name: 'inventory-lisbon', numPartitions: 2 },
  { name: 'payments', numPartitions: 2 },
  { name: 'ledger', numPartitions: 2 },
  { name: 'audit', numPartitions: 1 },
]

/** Committed offsets of the empty groups: [topic, partition, offset, leader epoch | null]. */
export const EMPTY_GROUP_OFFSETS: readonly [string, number, bigint, number | null][] = [
  ['payments', 0, 4n, null],
  ['payments', 1, 9n, 3],
]
const ORDERS_OFFSETS: readonly [string, number, bigint, number][] = [
  ['orders', 0, 5n, -1],
  ['orders', 1, 7n, 2],
  ['customers', 1, 11n, -1],
  [`${GROUPS.orders}-orders-by-customer-repartition`, 0, 3n, -1],
  ['ledger', 0, 1n, -1], // a topic the group does not read: committed, but not in its source topics
]

/** payments → a stateful processor (changelog) → ledger; for the empty groups. */
function paymentsTopology(): Topology {
  return new Topology()
    .addSource('payments-source', 'payments')
    .addProcessor('payments-balance', ['payments-source'])
    .addStateStore('balances', 'payments-balance')
    .addSink('ledger-sink', 'ledger', 'payments-balance')
}

function auditTopology(): Topology {
  return new Topology().addSource('audit-source', 'audit').addProcessor('audit-log', ['audit-source'])
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export class Scenario {
  readonly bootstrap: string
  readonly admin: Admin
  readonly #server: TopographProcess
  readonly #dataDir: string
  readonly #members: StreamsMember[] = []
  readonly #net: NetworkClient

  private constructor(server: TopographProcess, dataDir: string) {
    this.#server = server
    this.#dataDir = dataDir
    this.bootstrap = `127.0.0.1:${server.port}`
    this.admin = Admin.create({ bootstrapServers: this.bootstrap, clientId: 'kafka-interop-setup' })
    this.#net = new NetworkClient({ bootstrapServers: this.bootstrap, clientId: 'kafka-interop-setup' })
  }

  static async start(log: (line: string) => void): Promise<Scenario> {
    const dataDir = mkdtempSync(join(tmpdir(), 'topograph-interop-'))
    const server = await startTopographProcess({ ...SERVER_SETTINGS, 'data.dir': dataDir })
    const s = new Scenario(server, dataDir)
    try {
      log(`Topograph server on ${s.bootstrap} (data.dir ${dataDir})`)
      await s.#setUp(log)
      return s
    } catch (e) {
      await s.close()
      throw e
    }
  }

  /** What the server printed so far. */
  serverOutput(): string {
    return this.#server.output()
  }

  async #setUp(log: (line: string) => void): Promise<void> {
    await this.admin.createTopics(TOPICS).all()
    const orders = ordersApplication()
    const inventory = inventoryApplication(2)
    for (let i = 1; i <= 2; i++) {
      await this.#join(GROUPS.orders, orders.topology, i)
    }
    await this.#join(GROUPS.inventory, inventory.topology, 1, {
      userEndpoint: { host: 'inventory-1.example', port: 8080 },
      rackId: 'rack-a',
      clientTags: { zone: 'eu-central-1a' },
    })
    await this.#join(GROUPS.nodesc, auditTopology(), 1, { 'topology.description.push.enabled': false })
    await this.waitStable([GROUPS.orders, GROUPS.inventory, GROUPS.nodesc], [GROUPS.orders, GROUPS.inventory])
    log(`live groups stable: ${GROUPS.orders} (2 members), ${GROUPS.inventory}, ${GROUPS.nodesc}`)

    // offsets committed by the live members of interop-orders, with their member ids and epochs
    const m = this.#members.find((x) => x.groupId === GROUPS.orders)!
    await this.#memberCommit(m, ORDERS_OFFSETS)
    await this.recreateEmptyGroup(GROUPS.empty)
    await this.ensureClassicGroup()
    log(`${GROUPS.empty} (Empty, offsets), ${GROUPS.classic} (classic) ready`)
  }

  async #join(
    groupId: string,
    topology: Topology,
    index: number,
    extra: Partial<ConstructorParameters<typeof StreamsMember>[0]> = {},
  ): Promise<StreamsMember> {
    const member = new StreamsMember({
      bootstrapServers: this.bootstrap,
      applicationId: groupId,
      topology,
      clientId: `${groupId}-${index}`,
      processId: `00000000-0000-4000-8000-${String(this.#members.length + 1).padStart(12, '0')}`,
      rebalanceTimeoutMs: 30_000,
      ...extra,
    })
    this.#members.push(member)
    await member.start()
    return member
  }

  async #memberCommit(m: StreamsMember, offsets: readonly [string, number, bigint, number][]): Promise<void> {
    const byTopic = new Map<
      string,
      { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number }[]
    >()
    for (const [topic, partition, offset, epoch] of offsets) {
      const list = byTopic.get(topic) ?? []
      list.push({ partitionIndex: partition, committedOffset: offset, committedLeaderEpoch: epoch })
      byTopic.set(topic, list)
    }
    const coordinator = await this.#net.findCoordinator(m.groupId)
    const res = await this.#net.sendTo(
      coordinator,
      8,
      {
        groupId: m.groupId,
        generationIdOrMemberEpoch: m.memberEpoch,
        memberId: m.memberId,
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [...byTopic].map(([name, partitions]) => ({
          name,
          topicId: '00000000-0000-0000-0000-000000000000',
          partitions: partitions.map((p) => ({ ...p, committedMetadata: '' })),
        })),
      },
      { version: 9 },
    )
    const failed = res.topics.flatMap((t) =>
      t.partitions
        .filter((p) => p.errorCode !== 0)
        .map((p) => `${t.name}-${p.partitionIndex}: ${p.errorCode}`),
    )
    if (failed.length > 0) throw new Error(`member offset commit failed: ${failed.join(', ')}`)
  }

  /**
   * (Re)creates an Empty streams group with the payments topology and EMPTY_GROUP_OFFSETS: a member
   * joins (and pushes its description when asked), leaves, and the admin client commits the offsets.
   */
  async recreateEmptyGroup(groupId: string): Promise<void> {
    const listing = (await this.admin.listGroups()).find((g) => g.groupId === groupId)
    if (listing === undefined) {
      const member = await this.#join(groupId, paymentsTopology(), 1)
      await this.waitStable([groupId], [groupId])
      await member.close()
      this.#members.splice(this.#members.indexOf(member), 1)
    } else if (listing.groupState !== 'Empty') {
      throw new Error(`${groupId} is ${listing.groupState}, not Empty`)
    }
    await this.restoreEmptyGroupOffsets(groupId)
  }

  /** A classic group: an admin offset commit for an unknown group id creates one (Empty, no protocol). */
  async ensureClassicGroup(): Promise<void> {
    await this.admin
      .alterStreamsGroupOffsets(GROUPS.classic, [{ topic: 'audit', partition: 0, offset: 2n }])
      .all()
  }

  /** Puts EMPTY_GROUP_OFFSETS back (the group must be Empty); other committed offsets are deleted. */
  async restoreEmptyGroupOffsets(groupId: string): Promise<void> {
    const current = await this.admin.listStreamsGroupOffsets(groupId)
    const extra = current.filter(
      (c) => !EMPTY_GROUP_OFFSETS.some(([t, p]) => t === c.topic && p === c.partition),
    )
    if (extra.length > 0) await this.admin.deleteStreamsGroupOffsets(groupId, extra).all()
    await this.admin
      .alterStreamsGroupOffsets(
        groupId,
        EMPTY_GROUP_OFFSETS.map(([topic, partition, offset, leaderEpoch]) => ({
          topic,
          partition,
          offset,
          leaderEpoch,
        })),
      )
      .all()
  }

  /**
   * Waits until every group is Stable with every member at the group epoch, owning its target
   * assignment, and (for `described`) an AVAILABLE topology description.
   */
  async waitStable(
    groups: readonly string[],
    described: readonly string[],
    timeoutMs = 60_000,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs
    let last = ''
    for (;;) {
      const d = await this.admin.describeStreamsGroups(groups, { includeTopologyDescription: true }).settled()
      const problems: string[] = []
      for (const g of groups) {
        const r = d.get(g)
        if (r === undefined || 'error' in r) {
          problems.push(`${g}: ${r === undefined ? 'no answer' : String(r.error)}`)
          continue
        }
        problems.push(...unstable(r.value, described.includes(g)))
      }
      if (problems.length === 0) return
      last = problems.join('; ')
      if (Date.now() > deadline) throw new Error(`groups not stable after ${timeoutMs} ms: ${last}`)
      await sleep(250)
    }
  }

  /**
   * The state the two tools' outputs depend on, as one string: every group and its state, every
   * streams group's description, committed offsets. Equal before and after a pair of runs means both
   * tools saw the same state.
   */
  async fingerprint(): Promise<string> {
    const listings = await this.admin.listGroups()
    const ids = listings.filter((g) => g.groupType === 'streams').map((g) => g.groupId)
    const described = await this.admin
      .describeStreamsGroups(ids, { includeTopologyDescription: true })
      .settled()
    const offsets: Record<string, unknown> = {}
    for (const g of listings) {
      offsets[g.groupId] = await this.admin.listStreamsGroupOffsets(g.groupId).catch((e) => String(e))
    }
    return JSON.stringify({ listings, described: [...described], offsets }, (_k, v) =>
      typeof v === 'bigint' ? v.toString() : v,
    )
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#members.map((m) => m.close()))
    await this.admin.close().catch(() => undefined)
    await this.#net.close().catch(() => undefined)
    await this.#server.stop().catch(() => undefined)
    rmSync(this.#dataDir, { recursive: true, force: true })
  }
}

function sameTasks(
  a: StreamsGroupDescription['members'][number]['assignment'],
  b: StreamsGroupDescription['members'][number]['assignment'],
): boolean {
  const key = (x: typeof a) =>
    JSON.stringify(
      [x.activeTasks, x.standbyTasks, x.warmupTasks].map((l) =>
        l.map((t) => `${t.subtopologyId}:${[...t.partitions].sort((p, q) => p - q)}`).sort(),
      ),
    )
  return key(a) === key(b)
}

function unstable(d: StreamsGroupDescription, described: boolean): string[] {
  const problems: string[] = []
  if (d.groupState !== 'Stable') problems.push(`${d.groupId} is ${d.groupState}`)
  if (d.targetAssignmentEpoch !== d.groupEpoch) problems.push(`${d.groupId} target epoch behind`)
  for (const m of d.members) {
    if (m.memberEpoch !== d.groupEpoch || !sameTasks(m.assignment, m.targetAssignment))
      problems.push(`${d.groupId}/${m.memberId} reconciling`)
  }
  if (described && d.topologyDescriptionStatus !== 'AVAILABLE')
    problems.push(`${d.groupId} description ${d.topologyDescriptionStatus}`)
  return problems
}
