/**
 * `topograph demo [--bootstrap-server HOST:PORT] [--instances N]`: runs two sample streams
 * applications on Topograph's streams member against a cluster, so that the console has
 * topologies to draw:
 *
 * - `demo-orders`: orders re-keyed by customer through a repartition topic, then joined with a
 *   customers table (a state store) in a second subtopology;
 * - `demo-inventory`: a global store of products, the `inventory-<warehouse>` topics and a sink
 *   whose topic is chosen per record.
 *
 * The inventory topology can also read its topics through a pattern source (`patternSource`), as
 * the console's tests draw it; the demo does not run that variant because streams groups reject
 * regex subscriptions ("Regular expressions for source topics are not supported yet.", as in
 * Kafka 4.x), so such a member never joins.
 *
 * The members heartbeat and push their topology descriptions (KIP-1331). A feeder writes customers,
 * orders, products and stock movements into the input topics, and each member processes the
 * partitions of its active tasks and commits its offsets (demo-data.ts), so that the console and
 * `kafka-streams-groups --describe --offsets` show end offsets and lag; as Kafka Streams does, they
 * delete the repartition topic's records up to their committed offsets (`purgeIntervalMs`).
 * Against a cluster that does not serve Produce/Fetch the members still join and push, without
 * data.
 * Runs until SIGINT/SIGTERM, then every member leaves its group.
 */
import { Admin, KafkaError, type NewTopic } from '../clients/admin/index.js'
import { Fetcher } from '../clients/dataplane/fetcher.js'
import { Producer } from '../clients/dataplane/producer.js'
import { StreamsMember } from '../clients/streams/member.js'
import { Topology } from '../clients/streams/topology.js'
import {
  type Feeder,
  inventoryLogic,
  ordersLogic,
  type RecordHandler,
  startFeeder,
  startTaskProcessor,
  type TaskProcessor,
} from './demo-data.js'

export interface DemoApplication {
  readonly applicationId: string
  readonly topology: Topology
  /**
   * the topology epoch its members send: raised whenever the topology they send changes, so that a
   * group kept in a data.dir with the earlier topology takes the new one (see TOPOLOGY_EPOCH)
   */
  readonly topologyEpoch: number
  /** the input and output topics it needs (internal topics are created by the coordinator) */
  readonly topics: readonly NewTopic[]
  /** what it does with a record (demo-data.ts); absent: its members only join */
  readonly logic?: () => RecordHandler
}

/**
 * The demo applications' topology epoch. Epoch 0 was the topology without internal topic configs;
 * epoch 1 carries Kafka Streams' default internal topic configs. A group stored with epoch 0 takes
 * epoch 1 as a topology update, whether its old members left or are still in it (they are told
 * their topology is stale until their sessions time out); a changed topology at the same epoch
 * would be refused (STREAMS_INVALID_TOPOLOGY_EPOCH).
 */
export const TOPOLOGY_EPOCH = 1

/** The orders application: a repartition and a join. */
export function ordersApplication(partitions = 3): DemoApplication {
  const t = new Topology()
  const ordersSource = t.newName('KSTREAM-SOURCE')
  const selectKey = t.newName('KSTREAM-KEY-SELECT')
  const repartitionSink = t.newName('KSTREAM-SINK')
  const repartitionSource = t.newName('KSTREAM-SOURCE')
  const customersSource = t.newName('KTABLE-SOURCE')
  const customersTable = t.newName('KTABLE-SOURCE-PROCESSOR')
  const join = t.newName('KSTREAM-JOIN')
  const enrichedSink = t.newName('KSTREAM-SINK')
  const repartitionTopic = 'orders-by-customer-repartition'
  t.addSource(ordersSource, 'orders')
    .addProcessor(selectKey, [ordersSource])
    .addRepartitionTopic(repartitionTopic, partitions)
    .addSink(repartitionSink, repartitionTopic, selectKey)
    .addSource(repartitionSource, repartitionTopic)
    .addSource(customersSource, 'customers')
    .addProcessor(customersTable, [customersSource])
    .addStateStore('customers-store', customersTable)
    .addProcessor(join, [repartitionSource], { stores: ['customers-store'] })
    .addSink(enrichedSink, 'enriched-orders', join)
    .copartitionSources(repartitionTopic, 'customers')
  return {
    applicationId: 'demo-orders',
    topology: t,
    topologyEpoch: TOPOLOGY_EPOCH,
    topics: ['orders', 'customers', 'enriched-orders'].map((name) => ({ name, numPartitions: partitions })),
    logic: () => ordersLogic('demo-orders'),
  }
}

/** The inventory application: a global store, a dynamic sink, and optionally a pattern source. */
export function inventoryApplication(
  partitions = 3,
  opts: { readonly patternSource?: boolean } = {},
): DemoApplication {
  const t = new Topology()
  const globalSource = t.newName('KSTREAM-SOURCE')
  const globalProcessor = t.newName('KTABLE-SOURCE')
  const inventorySource = t.newName('KSTREAM-SOURCE')
  const lookup = t.newName('KSTREAM-LEFTJOIN')
  const lowStock = t.newName('KSTREAM-FILTER')
  const alertsSink = t.newName('KSTREAM-SINK')
  const counts = t.newName('KSTREAM-AGGREGATE')
  t.addGlobalStore('products-global-store', globalSource, 'products', globalProcessor)
  if (opts.patternSource === true) t.addSource(inventorySource, /inventory-.*/)
  else t.addSource(inventorySource, 'inventory-berlin', 'inventory-lisbon')
  t.addProcessor(lookup, [inventorySource])
    .addProcessor(lowStock, [lookup])
    // The alert topic is chosen per record: one per warehouse.
    .addSink(alertsSink, { toString: () => 'alerts-<warehouse of the record>' }, lowStock)
    .addProcessor(counts, [lookup])
    .addStateStore('stock-levels', counts)
  return {
    applicationId: 'demo-inventory',
    topology: t,
    topologyEpoch: TOPOLOGY_EPOCH,
    topics: ['products', 'inventory-berlin', 'inventory-lisbon', 'alerts-berlin', 'alerts-lisbon'].map(
      (name) => ({ name, numPartitions: partitions }),
    ),
    logic: () => inventoryLogic('demo-inventory'),
  }
}

export const DEMO_USAGE = `Usage: topograph demo [--bootstrap-server HOST:PORT] [--instances N]

Runs two sample streams applications (demo-orders, demo-inventory) against the cluster until
SIGINT or SIGTERM, with a feeder writing into their input topics and the members processing and
committing, so that the console (http://localhost:8080 with \`npm start\`) has topologies to
draw, topics with data, and lag to show.

  --bootstrap-server HOST:PORT   The cluster (default localhost:9092).
  --instances N                  Members per application (default 2, 1..16).`

export interface DemoIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  /** Registers a handler for SIGTERM and SIGINT; returns a function that removes it. */
  readonly onStopSignal: (handler: (signal: string) => void) => () => void
}

interface DemoArgs {
  readonly bootstrapServer: string
  readonly instances: number
}

function parseDemoArgs(argv: readonly string[]): DemoArgs | 'help' | string {
  let bootstrapServer = 'localhost:9092'
  let instances = 2
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--help' || arg === '-h') return 'help'
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1
    const name = eq > 0 ? arg.slice(0, eq) : arg
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i]
    if (value === undefined || value === '') return `${name} needs a value`
    if (name === '--bootstrap-server') bootstrapServer = value
    else if (name === '--instances') {
      instances = Number(value)
      if (!Number.isInteger(instances) || instances < 1 || instances > 16)
        return `--instances must be an integer from 1 to 16, got '${value}'`
    } else return `unknown option '${arg}' for demo`
  }
  return { bootstrapServer, instances }
}

export interface RunningDemo {
  readonly members: readonly StreamsMember[]
  /** one per member, in the order of `members` (none when started with `data: false`) */
  readonly processors: readonly TaskProcessor[]
  readonly feeder: Feeder | null
  /**
   * Stops the feeder and the processing, closes their connections (a send or fetch still waiting
   * for its answer fails at once), then every member leaves its group.
   */
  close(): Promise<void>
}

/** Creates the demo topics (existing ones are kept) and starts `instances` members per application. */
export async function startDemo(opts: {
  readonly bootstrapServers: string
  readonly instances?: number
  /** both by default; the feeder writes only into the topics of those given */
  readonly applications?: readonly DemoApplication[]
  readonly log?: (line: string) => void
  /** feed the input topics and process (true) */
  readonly data?: boolean
  /** how often the feeder writes (1000 ms) */
  readonly feedIntervalMs?: number
  /**
   * at least how long between two purges of a member's repartition topic partitions (Kafka
   * Streams' `repartition.purge.interval.ms`, 30000 ms)
   */
  readonly purgeIntervalMs?: number
}): Promise<RunningDemo> {
  const apps = opts.applications ?? [ordersApplication(), inventoryApplication()]
  const log = opts.log ?? (() => undefined)
  const admin = Admin.create({ bootstrapServers: opts.bootstrapServers, clientId: 'topograph-demo' })
  try {
    const outcomes = await admin.createTopics(apps.flatMap((a) => a.topics)).settled()
    for (const [name, outcome] of outcomes) {
      if ('error' in outcome && outcome.error.errorName !== 'TOPIC_ALREADY_EXISTS') throw outcome.error
      log('value' in outcome ? `created topic ${name}` : `topic ${name} exists`)
    }
  } catch (e) {
    await admin.close()
    throw e
  }
  const data = opts.data ?? true
  const producer = data
    ? Producer.create({ bootstrapServers: opts.bootstrapServers, clientId: 'topograph-demo-producer' })
    : null
  const members: StreamsMember[] = []
  const processors: TaskProcessor[] = []
  const fetchers: Fetcher[] = []
  let feeder: Feeder | null = null
  const closeAll = async (): Promise<void> => {
    // Stop the loops, then close the clients they write and read with: a send, fetch or purge still
    // waiting for its answer fails at once instead of holding close() until its timeout. Then the
    // members leave their groups.
    const stopping = [...processors.map((p) => p.stop()), feeder?.stop()]
    await Promise.allSettled([...fetchers.map((f) => f.close()), producer?.close(), admin.close()])
    await Promise.allSettled(stopping)
    await Promise.allSettled(members.map((m) => m.close()))
  }
  try {
    for (const app of apps) {
      // one handler per application: its tables are shared by its members in this process
      const handler = app.logic?.()
      for (let i = 0; i < (opts.instances ?? 2); i++) {
        const member = new StreamsMember({
          bootstrapServers: opts.bootstrapServers,
          applicationId: app.applicationId,
          topology: app.topology,
          topologyEpoch: app.topologyEpoch,
          clientId: `${app.applicationId}-${i + 1}`,
          onError: (e: KafkaError) => log(`${app.applicationId}-${i + 1}: ${e.message}`),
        })
        members.push(member)
        await member.start()
        log(`${app.applicationId}: member ${i + 1} joined (${member.memberId})`)
        if (producer !== null && handler !== undefined) {
          const fetcher = new Fetcher({
            bootstrapServers: opts.bootstrapServers,
            clientId: `${app.applicationId}-${i + 1}-fetcher`,
          })
          fetchers.push(fetcher)
          processors.push(
            startTaskProcessor({
              member,
              applicationId: app.applicationId,
              topology: app.topology,
              handler,
              fetcher,
              producer,
              admin,
              log,
              purgeIntervalMs: opts.purgeIntervalMs,
            }),
          )
        }
      }
    }
    if (producer !== null)
      feeder = startFeeder(producer, log, {
        topics: new Set(apps.flatMap((a) => a.topics.map((t) => t.name))),
        intervalMs: opts.feedIntervalMs,
      })
  } catch (e) {
    await closeAll()
    throw e
  }
  return { members, processors, feeder, close: closeAll }
}

/** Runs `topograph demo`; resolves with the exit status after a stop signal. */
export async function runDemo(argv: readonly string[], io: DemoIo): Promise<number> {
  const args = parseDemoArgs(argv)
  if (args === 'help') {
    io.stdout(`${DEMO_USAGE}\n`)
    return 0
  }
  if (typeof args === 'string') {
    io.stderr(`topograph demo: ${args}\n\n${DEMO_USAGE}\n`)
    return 2
  }
  let stop: (() => void) | null = null
  let stopped = false
  const removeHandler = io.onStopSignal(() => {
    stopped = true
    stop?.()
  })
  try {
    let demo: RunningDemo
    try {
      demo = await startDemo({
        bootstrapServers: args.bootstrapServer,
        instances: args.instances,
        log: (line) => io.stdout(`${line}\n`),
      })
    } catch (e) {
      io.stderr(`topograph demo: ${e instanceof KafkaError ? e.toString() : String(e)}\n`)
      return 1
    }
    io.stdout('Demo running: open the console (http://localhost:8080 with `npm start`). Ctrl-C stops it.\n')
    if (!stopped) await new Promise<void>((resolve) => (stop = resolve))
    await demo.close()
    io.stdout('Demo stopped: every member left its group.\n')
    return 0
  } finally {
    removeHandler()
  }
}
