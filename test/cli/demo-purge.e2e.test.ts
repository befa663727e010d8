// The demo against a real server, with a short purge interval: the orders application's members
// delete the records of the repartition topic they have committed past, as Kafka Streams does, so
// the topic's log start offset moves up, never past the group's committed offset, and every record
// from the committed offset to the log end is still there to be read. Afterwards
// kafka-streams-groups --describe --offsets and the console's lag agree with those offsets. The
// internal topics carry the configs Kafka Streams gives them.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningDemo, startDemo } from '../../src/cli/demo.js'
import { execute } from '../../src/cli/kafka-streams-groups.js'
import { Admin, OffsetSpec } from '../../src/clients/admin/index.js'
import { Fetcher } from '../../src/clients/dataplane/fetcher.js'
import type { GroupResponse } from '../../src/console/api-types.js'
import { type RunningConsole, startConsole } from '../../src/console/index.js'
import { eventually } from '../helpers/interop.js'
import { FAST_GROUPS } from '../helpers/kip1331.js'
import { startTestServer, type TestServer } from '../server/harness.js'

const GROUP = 'demo-orders'
const REPARTITION = 'demo-orders-orders-by-customer-repartition'
const PARTITIONS = [0, 1, 2]

let server: TestServer
let bootstrap: string
let admin: Admin
let demo: RunningDemo | undefined

interface PartitionOffsets {
  readonly partition: number
  readonly logStart: number
  readonly committed: number
  readonly logEnd: number
}

/** The repartition topic's log start offsets, then the group's committed offsets, then the log ends. */
async function offsets(): Promise<PartitionOffsets[]> {
  const query = (spec: OffsetSpec) =>
    admin
      .listOffsets(PARTITIONS.map((partition) => ({ topic: REPARTITION, partition, spec })))
      .all()
      .then((all) => new Map(all.map((o) => [o.partition, Number(o.offset)])))
  const starts = await query(OffsetSpec.earliest())
  const committed = new Map(
    (await admin.listStreamsGroupOffsets(GROUP))
      .filter((o) => o.topic === REPARTITION)
      .map((o) => [o.partition, Number(o.offset)]),
  )
  const ends = await query(OffsetSpec.latest())
  return PARTITIONS.map((partition) => ({
    partition,
    logStart: starts.get(partition)!,
    committed: committed.get(partition) ?? -1,
    logEnd: ends.get(partition)!,
  }))
}

/** No record the group has not committed past is gone: log start ≤ committed (or 0 uncommitted). */
function assertNothingUncommittedDeleted(seen: readonly PartitionOffsets[]): void {
  for (const p of seen) assert.ok(p.logStart <= Math.max(0, p.committed), JSON.stringify(seen))
}

before(async () => {
  server = await startTestServer({ 'coordinator.storage': 'memory', ...FAST_GROUPS })
  bootstrap = `127.0.0.1:${server.port}`
  admin = Admin.create({ bootstrapServers: bootstrap, clientId: 'demo-purge-test' })
})

after(async () => {
  await demo?.close()
  await admin?.close()
  await server?.stop()
})

describe('the demo purges its repartition topic', () => {
  it('moves the log start up to at most the committed offset, keeping what is uncommitted', {
    timeout: 300_000,
  }, async () => {
    demo = await startDemo({
      bootstrapServers: bootstrap,
      instances: 2,
      feedIntervalMs: 100,
      purgeIntervalMs: 200,
    })

    // The coordinator created the internal topics with the configs Kafka Streams asks for: the
    // repartition topic kept until purged, in 50 MiB segments; the store's changelog compacted.
    const topicConfigs = async (topic: string, keys: readonly string[]) => {
      const resource = { type: 'TOPIC', name: topic } as const
      const config = await admin.describeConfigs([resource]).get(resource)
      return keys.map((k) => [k, config.get(k)?.value, config.get(k)?.source])
    }
    assert.deepEqual(
      await topicConfigs(REPARTITION, [
        'cleanup.policy',
        'retention.ms',
        'segment.bytes',
        'message.timestamp.type',
      ]),
      [
        ['cleanup.policy', 'delete', 'DYNAMIC_TOPIC_CONFIG'],
        ['retention.ms', '-1', 'DYNAMIC_TOPIC_CONFIG'],
        ['segment.bytes', '52428800', 'DYNAMIC_TOPIC_CONFIG'],
        ['message.timestamp.type', 'CreateTime', 'DYNAMIC_TOPIC_CONFIG'],
      ],
    )
    assert.deepEqual(await topicConfigs(`${GROUP}-customers-store-changelog`, ['cleanup.policy']), [
      ['cleanup.policy', 'compact', 'DYNAMIC_TOPIC_CONFIG'],
    ])

    // Every repartition partition with commits gets purged: its log start leaves 0.
    let seen: PartitionOffsets[] = []
    const first = await eventually(
      async () => {
        seen = await offsets()
        assertNothingUncommittedDeleted(seen)
        return seen.some((p) => p.logStart > 0) && seen.every((p) => p.committed <= 0 || p.logStart > 0)
          ? seen
          : undefined
      },
      120_000,
      () => JSON.stringify(seen),
    )
    // And keeps moving up as the members commit further.
    await eventually(
      async () => {
        seen = await offsets()
        assertNothingUncommittedDeleted(seen)
        return seen.some((p) => p.logStart > first.find((f) => f.partition === p.partition)!.logStart)
          ? true
          : undefined
      },
      120_000,
      () => `${JSON.stringify(first)} then ${JSON.stringify(seen)}`,
    )

    // With the feeder and the processing stopped (every purge answered) and the members still in
    // the group, the log start of each partition is at most its committed offset, and every record
    // from there to the log end can still be read.
    await demo.feeder!.stop()
    await Promise.all(demo.processors.map((p) => p.stop()))
    const final = await offsets()
    assertNothingUncommittedDeleted(final)
    assert.ok(
      final.some((p) => p.logStart > 0),
      JSON.stringify(final),
    )
    const fetcher = new Fetcher({ bootstrapServers: bootstrap, clientId: 'demo-purge-test-fetcher' })
    try {
      for (const p of final) {
        let offset = Math.max(0, p.committed)
        while (offset < p.logEnd) {
          const [f] = await fetcher.fetch([{ topic: REPARTITION, partition: p.partition, offset }], {
            maxWaitMs: 0,
          })
          assert.equal(f!.error, null, `${REPARTITION}-${p.partition} at ${offset}: ${JSON.stringify(final)}`)
          assert.ok(f!.records.length > 0 && f!.records[0]!.offset === offset, JSON.stringify(final))
          offset = f!.nextOffset
        }
      }
    } finally {
      await fetcher.close()
    }

    // kafka-streams-groups --describe --offsets --verbose: current offset = committed, lag = end − committed.
    let stdout = ''
    let stderr = ''
    const code = await execute(
      ['--bootstrap-server', bootstrap, '--describe', '--offsets', '--verbose', '--group', GROUP],
      { out: (s) => void (stdout += s), err: (s) => void (stderr += s) },
    )
    assert.equal(code, 0, stderr)
    const rows = stdout
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter(([, topic]) => topic === REPARTITION)
      .map(([, , partition, current, , end, lag]) => [Number(partition), current, end, lag] as const)
      .sort((a, b) => a[0] - b[0])
    assert.deepEqual(
      rows,
      final.map((p) => [p.partition, String(p.committed), String(p.logEnd), String(p.logEnd - p.committed)]),
      stdout,
    )

    // The console: the same lag, and a log start at most the committed offset.
    const console_: RunningConsole = await startConsole({
      bootstrapServers: [bootstrap],
      listener: { host: '127.0.0.1', port: 0 },
      metricsRegistry: null,
      uiFromSource: true,
    })
    try {
      const res = await fetch(`${console_.url}/api/groups/${GROUP}`, { signal: AbortSignal.timeout(30_000) })
      assert.equal(res.status, 200)
      const group = (await res.json()) as GroupResponse
      assert.deepEqual(
        group.offsets!.filter((o) => o.topic === REPARTITION),
        final.map((p) => ({
          topic: REPARTITION,
          partition: p.partition,
          committedOffset: p.committed,
          logStartOffset: p.logStart,
          logEndOffset: p.logEnd,
          lag: p.logEnd - p.committed,
        })),
      )
    } finally {
      await console_.close()
    }
    await demo.close()
    demo = undefined
  })
})
