// The built-in topology-description plugins across a server restart, end to end: a real
// `topograph start` process with `group.streams.topology.description.plugin.class=<alias>`, a
// StreamsMember (src/clients/streams) that pushes when asked, the admin client's describe with
// includeTopologyDescription; then SIGTERM and a restart on the same data.dir (and database).
// sqlite and postgres: describe is AVAILABLE right after the restart without a new push, and members
// that keep heartbeating are not asked again. memory: describe says NOT_STORED after the restart, the
// next heartbeat asks again, the member pushes and describe is AVAILABLE again.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { test } from 'node:test'
import { Admin, type StreamsGroupDescription } from '../../src/clients/admin/index.js'
import type { Logger } from '../../src/clients/network/logger.js'
import { StreamsMember, Topology } from '../../src/clients/streams/index.js'
import { tempDataDir } from '../server/harness.js'
import { dropTestTable, requirePostgres, uniqueName } from '../testkit/postgres.js'
import { FAST_GROUPS, waitFor } from '../helpers/kip1331.js'
import { StreamsMember as RawMember, simpleTopology } from '../helpers/streams-member.js'
import {
  freeLoopbackPort,
  startTopographProcess,
  type TopographProcess,
} from '../helpers/topograph-process.js'

type Alias = 'sqlite' | 'postgres' | 'memory'

/** Client log lines, by message. */
function recordingLogger(): { logger: Logger; count(text: string): number } {
  const lines: string[] = []
  const record = (a: unknown, b?: unknown) => {
    lines.push(typeof a === 'string' ? a : typeof b === 'string' ? b : '')
  }
  return {
    logger: { info: record, warn: record, error: record },
    count: (text) => lines.filter((l) => l.includes(text)).length,
  }
}

/** How often the server process logged a solicitation for the group. */
function solicitations(proc: TopographProcess, groupId: string): number {
  const marker = `[GroupId ${groupId}] Requested topology description push at topology epoch 0`
  return proc.output().split(marker).length - 1
}

function topology(topic: string): Topology {
  return new Topology()
    .addSource('restart-source', topic)
    .addProcessor('restart-proc', ['restart-source'])
    .addSink('restart-sink', `${topic}-out`, 'restart-proc')
}

async function describe(admin: Admin, groupId: string): Promise<StreamsGroupDescription> {
  const d = await admin.describeStreamsGroups([groupId], { includeTopologyDescription: true }).all()
  const g = d.get(groupId)
  assert.ok(g !== undefined, `describe answered for ${groupId}`)
  return g
}

function assertPushedDescription(g: StreamsGroupDescription, topic: string): void {
  assert.equal(g.topologyDescriptionStatus, 'AVAILABLE')
  assert.ok(g.topologyDescription !== null)
  const text = JSON.stringify(g.topologyDescription)
  for (const name of ['restart-source', 'restart-proc', 'restart-sink', topic, `${topic}-out`])
    assert.ok(text.includes(name), `the description names ${name}`)
}

/** Settles within `ms` whatever `p` does (for cleanup against a server that may be gone). */
async function bounded(p: Promise<unknown>, ms = 5000): Promise<void> {
  let t: NodeJS.Timeout | undefined
  await Promise.race([p.catch(() => undefined), new Promise((r) => (t = setTimeout(r, ms)))])
  clearTimeout(t)
}

async function restartScenario(alias: Alias, pluginConfigs: Record<string, string> = {}): Promise<void> {
  const durable = alias !== 'memory'
  const dataDir = tempDataDir()
  const port = await freeLoopbackPort()
  const suffix = randomUUID().slice(0, 8)
  const groupId = `restart-${alias}-${suffix}`
  const topic = `restart-${alias}-${suffix}-in`
  const settings: Record<string, string> = {
    listeners: `PLAINTEXT://127.0.0.1:${port}`,
    'data.dir': dataDir,
    'coordinator.storage': 'sqlite',
    ...FAST_GROUPS,
    'group.streams.topology.description.plugin.class': alias,
    ...pluginConfigs,
  }
  const bootstrapServers = `127.0.0.1:${port}`
  const log = recordingLogger()
  let proc: TopographProcess | undefined
  let admin: Admin | undefined
  let member: StreamsMember | undefined
  let raw: RawMember | undefined
  try {
    proc = await startTopographProcess(settings)
    admin = Admin.create({ bootstrapServers })
    await admin.createTopics([{ name: topic, numPartitions: 2 }]).all()

    // A member joins, is asked, pushes; describe shows its description.
    member = new StreamsMember({
      bootstrapServers,
      applicationId: groupId,
      topology: topology(topic),
      rebalanceTimeoutMs: 5000,
      retryBackoffMs: 20,
      retryBackoffMaxMs: 200,
      logger: log.logger,
    })
    await member.start()
    await waitFor(
      'the first push',
      async () => (await describe(admin!, groupId)).topologyDescriptionStatus === 'AVAILABLE',
      15_000,
    )
    const before = await describe(admin, groupId)
    assertPushedDescription(before, topic)
    assert.equal(log.count('Topology description pushed successfully'), 1)
    assert.equal(solicitations(proc, groupId), 1)

    if (durable) {
      // A second member, driven by raw heartbeats so that every response's flag can be read.
      const joiner = await RawMember.connect(port, {
        groupId,
        memberId: `${groupId}-raw`,
        processId: `${groupId}-raw-process`,
        topology: simpleTopology([topic]),
      })
      raw = joiner
      for (let i = 0; i < 5; i++) {
        const r = await joiner.heartbeat()
        assert.equal(r.errorCode, 0, r.errorMessage ?? '')
        assert.equal(r.topologyDescriptionRequired, false, 'a description is stored: nobody is asked')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }

    // Graceful stop, restart on the same data.dir, port and plugin store.
    await admin.close()
    admin = undefined
    raw?.close()
    assert.deepEqual(await proc.stop(), { code: 0, signal: null }, proc.output())
    proc = await startTopographProcess(settings)
    admin = Admin.create({ bootstrapServers })
    const after = await describe(admin, groupId)

    if (durable) {
      assertPushedDescription(after, topic)
      assert.deepEqual(after.topologyDescription, before.topologyDescription)
      assert.equal(log.count('Sending topology description'), 1, 'no new push before the describe')
      // Both members keep heartbeating on the restarted server and are never asked again.
      const resumed = await RawMember.connect(proc.port, {
        groupId,
        memberId: raw!.memberId,
        processId: raw!.processId,
        topology: raw!.topology,
      })
      resumed.epoch = raw!.epoch
      resumed.active = raw!.active
      resumed.standby = raw!.standby
      resumed.warmup = raw!.warmup
      raw = resumed
      for (let i = 0; i < 10; i++) {
        const r = await resumed.heartbeat()
        assert.equal(r.errorCode, 0, r.errorMessage ?? '')
        assert.equal(r.topologyDescriptionRequired, false, 'not asked again after the restart')
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.equal(solicitations(proc, groupId), 0, proc.output())
      assert.equal(log.count('Broker requested topology description push'), 1)
      assert.equal(log.count('Sending topology description'), 1)
      assert.equal(member.state, 'STABLE')
      assertPushedDescription(await describe(admin, groupId), topic)
    } else {
      assert.equal(after.topologyDescriptionStatus, 'NOT_STORED')
      assert.equal(after.topologyDescription, null)
      // The describe found nothing for the stored epoch (D2): the next heartbeat asks again.
      await waitFor('the member is asked again', () => solicitations(proc!, groupId) === 1, 15_000)
      await waitFor(
        'the second push',
        () => log.count('Topology description pushed successfully') === 2,
        15_000,
      )
      assert.equal(log.count('Broker requested topology description push'), 2)
      const again = await describe(admin, groupId)
      assertPushedDescription(again, topic)
      assert.deepEqual(again.topologyDescription, before.topologyDescription)
    }
  } finally {
    raw?.close()
    if (member !== undefined) await bounded(member.close())
    if (admin !== undefined) await bounded(admin.close())
    await proc?.kill()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

test('sqlite: the description survives a restart; heartbeating members are not asked again', {
  timeout: 120_000,
}, async () => {
  await restartScenario('sqlite')
})

test('postgres: the description survives a restart; heartbeating members are not asked again', {
  timeout: 120_000,
}, async () => {
  // A table of its own, so that parallel test files never see each other's rows.
  const table = uniqueName('e2e_restart_')
  try {
    await restartScenario('postgres', {
      'topology.description.postgres.url': requirePostgres(),
      'topology.description.postgres.table': table,
      'topology.description.postgres.pool.size': '2',
    })
  } finally {
    await dropTestTable(table)
  }
})

test('memory: NOT_STORED after a restart, the next heartbeat asks again, the member pushes again', {
  timeout: 120_000,
}, async () => {
  await restartScenario('memory')
})
