// `coordinator.storage=postgres://…` against the real `topograph start` process: a streams group,
// simple and member offset commits and a topic, then kill -9 and a restart on a fresh data.dir (so
// everything must come from the database): the topic, every group, member, assignment and offset is
// back and the members keep going unfenced. A second server on the same store is refused at start.
import assert from 'node:assert/strict'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import pg from 'pg'
import { simpleTopology, StreamsMember } from '../helpers/streams-member.js'
import type { TopographProcess } from '../helpers/topograph-process.js'
import { tempDataDir } from '../server/harness.js'
import { createTestSchema, requirePostgres } from '../testkit/postgres.js'
import { commit, converge, describeGroup, startRestartableProcess } from '../testkit/restart-process.js'
import { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: test access to decoded bodies
type AnyBody = any

function startProcess(storage: string, dataDir: string): Promise<TopographProcess> {
  return startRestartableProcess(dataDir, { 'coordinator.storage': storage })
}

async function fetchOffsets(c: WireClient, groupId: string) {
  const { body } = await c.request<AnyBody>(9, 8, {
    groups: [{ groupId, topics: null }],
    requireStable: false,
  })
  return (body.groups[0].topics as AnyBody[]).flatMap((t) =>
    (t.partitions as AnyBody[]).map((p) => [t.name, p.partitionIndex, p.committedOffset, p.metadata]),
  )
}

async function topicPartitions(c: WireClient, name: string) {
  const { body } = await c.request<AnyBody>(3, 12, {
    topics: [{ name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }],
    allowAutoTopicCreation: false,
  })
  return {
    errorCode: body.topics[0].errorCode,
    topicId: body.topics[0].topicId,
    partitions: body.topics[0].partitions.length,
  }
}

test('postgres storage: kill -9 and a restart on a fresh data.dir lose nothing; a second server is refused', {
  timeout: 120_000,
}, async () => {
  // A schema of its own, so that parallel test files never share a store.
  const { schema, url: storage } = await createTestSchema('tg_e2e_', { applicationName: false })
  const admin = new pg.Client({ connectionString: requirePostgres() })
  await admin.connect()
  const dirs = [tempDataDir(), tempDataDir(), tempDataDir()]
  const procs: TopographProcess[] = []
  const clients: { close(): void }[] = []
  try {
    // 1. First life: a topic, simple commits, a streams group of two members with a member commit.
    const first = await startProcess(storage, dirs[0])
    procs.push(first)
    const c1 = await WireClient.connect(first.port)
    clients.push(c1)
    const created = await c1.request<AnyBody>(19, 7, {
      topics: [{ name: 'in', numPartitions: 4, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(created.body.topics[0].errorCode, 0)
    for (let i = 1n; i <= 50n; i++) {
      const r = await commit(c1, 'simple', Number(i % 4n), i)
      assert.equal(r.body.topics[0].partitions[0].errorCode, 0)
    }
    const members: StreamsMember[] = []
    for (const id of ['a', 'b']) {
      const m = await StreamsMember.connect(first.port, {
        groupId: 'app',
        memberId: id,
        processId: `p${id}`,
        topology: simpleTopology(['in']),
      })
      clients.push(m)
      members.push(m)
    }
    await converge(c1, 'app', members)
    const [a] = members
    const owned = Number(a.active[0].partitions[0])
    const memberCommit = await commit(c1, 'app', owned, 777n, 'a', a.epoch)
    assert.equal(memberCommit.body.topics[0].partitions[0].errorCode, 0)
    const before = {
      topic: await topicPartitions(c1, 'in'),
      group: await describeGroup(c1, 'app'),
      simple: await fetchOffsets(c1, 'simple'),
      app: await fetchOffsets(c1, 'app'),
    }
    assert.equal(before.simple.length, 4)
    assert.deepEqual(before.app, [['in', owned, 777n, 'o777']])

    // 2. A second server on the same store does not start, and says why.
    await assert.rejects(startProcess(storage, dirs[1]), (e: Error) => {
      assert.match(e.message, /exited \(code [1-9]\d*, signal null\) before listening/)
      assert.match(
        e.message,
        /is locked: another Topograph server is using it \(held by backend \d+ of topograph-coordinator-lock/,
      )
      return true
    })

    // 3. kill -9, then a restart on an empty data.dir: everything comes back from the database.
    await first.kill()
    const second = await startProcess(storage, dirs[2])
    procs.push(second)
    assert.ok(!existsSync(join(dirs[2], 'coordinator.db')), 'no SQLite file: the records are in PostgreSQL')
    const c2 = await WireClient.connect(second.port)
    clients.push(c2)
    assert.deepEqual(await topicPartitions(c2, 'in'), before.topic)
    assert.deepEqual(await describeGroup(c2, 'app'), before.group)
    assert.deepEqual(await fetchOffsets(c2, 'simple'), before.simple)
    assert.deepEqual(await fetchOffsets(c2, 'app'), before.app)

    // 4. The members carry on with their epochs and tasks, unfenced; a new commit is taken.
    const again: StreamsMember[] = []
    for (const m of members) {
      m.client.close()
      const next = await StreamsMember.connect(second.port, {
        groupId: 'app',
        memberId: m.memberId,
        processId: m.processId,
        topology: m.topology,
      })
      next.epoch = m.epoch
      next.active = m.active
      clients.push(next)
      again.push(next)
      const r = await next.heartbeat()
      assert.equal(r.errorCode, 0, `${m.memberId} is not fenced after the restart`)
      assert.equal(r.memberEpoch, m.epoch)
    }
    const stable = await converge(c2, 'app', again)
    assert.equal(stable.groupEpoch, before.group.groupEpoch)
    assert.deepEqual(again.flatMap((m) => m.activePartitions()).sort(), ['0-0', '0-1', '0-2', '0-3'])
    const later = await commit(c2, 'app', owned, 778n, 'a', again[0].epoch)
    assert.equal(later.body.topics[0].partitions[0].errorCode, 0)
    await second.stop()
    const rows = await admin.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${schema}.topograph_coordinator_records`,
    )
    assert.ok(Number(rows.rows[0].n) > 50, `${rows.rows[0].n} records in the database`)
  } finally {
    for (const c of clients) c.close()
    for (const p of procs) await p.kill()
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined)
    await admin.end()
  }
})
