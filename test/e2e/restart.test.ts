// Restart durability against the real `topograph start` process: kill -9 right after acknowledged
// OffsetCommits and heartbeats, restart on the same data.dir, and nothing acknowledged is lost;
// members that keep heartbeating are not fenced; a restart in the middle of a rebalance converges.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { test } from 'node:test'
import { simpleTopology, StreamsMember } from '../helpers/streams-member.js'
import type { TopographProcess } from '../helpers/topograph-process.js'
import { tempDataDir } from '../server/harness.js'
import { commit, converge, describeGroup, startRestartableProcess } from '../testkit/restart-process.js'
import { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: test access to decoded bodies
type AnyBody = any

const startProcess = (dataDir: string): Promise<TopographProcess> => startRestartableProcess(dataDir)

test('kill -9 loses nothing acknowledged; members keep going; a restart mid-rebalance converges', {
  timeout: 90_000,
}, async () => {
  const dataDir = tempDataDir()
  const procs: TopographProcess[] = []
  const clients: { close(): void }[] = []
  try {
    // 1. First life: topics, simple commits, a streams group with a member commit.
    const first = await startProcess(dataDir)
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
    const a = await StreamsMember.connect(first.port, {
      groupId: 'app',
      memberId: 'a',
      processId: 'pa',
      topology: simpleTopology(['in']),
    })
    const b = await StreamsMember.connect(first.port, {
      groupId: 'app',
      memberId: 'b',
      processId: 'pb',
      topology: simpleTopology(['in']),
    })
    clients.push(a, b)
    await converge(c1, 'app', [a, b])
    const owned = Number(a.active[0].partitions[0])
    const memberCommit = await commit(c1, 'app', owned, 777n, 'a', a.epoch)
    assert.equal(memberCommit.body.topics[0].partitions[0].errorCode, 0)
    await first.kill()

    // 2. Second life: every acknowledged offset is back; members that keep heartbeating stay.
    const second = await startProcess(dataDir)
    procs.push(second)
    const c2 = await WireClient.connect(second.port)
    clients.push(c2)
    const fetched = await c2.request<AnyBody>(9, 8, {
      groups: [{ groupId: 'simple', topics: [{ name: 'in', partitionIndexes: [0, 1, 2, 3] }] }],
      requireStable: false,
    })
    assert.deepEqual(
      fetched.body.groups[0].topics[0].partitions.map((p: AnyBody) => [
        p.partitionIndex,
        p.committedOffset,
        p.metadata,
      ]),
      [
        [0, 48n, 'o48'],
        [1, 49n, 'o49'],
        [2, 50n, 'o50'],
        [3, 47n, 'o47'],
      ],
    )
    const appOffsets = await c2.request<AnyBody>(9, 8, {
      groups: [{ groupId: 'app', topics: null }],
      requireStable: false,
    })
    assert.equal(appOffsets.body.groups[0].topics[0].partitions[0].committedOffset, 777n)
    for (const m of [a, b]) {
      m.client.close()
      const again = await StreamsMember.connect(second.port, {
        groupId: 'app',
        memberId: m.memberId,
        processId: m.processId,
        topology: m.topology,
      })
      again.epoch = m.epoch
      again.active = m.active
      clients.push(again)
      const r = await again.heartbeat()
      assert.equal(r.errorCode, 0, `${m.memberId} is not fenced after the restart`)
      assert.equal(r.memberEpoch, m.epoch)
    }
    const restarted = clients.slice(-2) as StreamsMember[]
    const stable = await describeGroup(c2, 'app')
    assert.equal(stable.groupState, 'Stable')
    assert.deepEqual(stable.members.map((m) => m.memberId).sort(), ['a', 'b'])

    // 3. A third member joins and the server is killed in the middle of the rebalance.
    const c = await StreamsMember.connect(second.port, {
      groupId: 'app',
      memberId: 'c',
      processId: 'pc',
      topology: simpleTopology(['in']),
    })
    clients.push(c)
    assert.equal((await c.heartbeat()).errorCode, 0)
    const midway = await describeGroup(c2, 'app')
    assert.notEqual(midway.groupState, 'Stable')
    await second.kill()

    const third = await startProcess(dataDir)
    procs.push(third)
    const c3 = await WireClient.connect(third.port)
    clients.push(c3)
    const group: StreamsMember[] = []
    for (const m of [...restarted, c]) {
      const again = await StreamsMember.connect(third.port, {
        groupId: 'app',
        memberId: m.memberId,
        processId: m.processId,
        topology: m.topology,
      })
      again.epoch = m.epoch
      again.active = m.active
      clients.push(again)
      group.push(again)
    }
    await converge(c3, 'app', group)
    const all = group.flatMap((m) => m.activePartitions()).sort()
    assert.deepEqual(all, ['0-0', '0-1', '0-2', '0-3'])
  } finally {
    for (const c of clients) c.close()
    for (const p of procs) await p.kill()
    rmSync(dataDir, { recursive: true, force: true })
  }
})
