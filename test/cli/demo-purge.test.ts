// Which repartition records a demo member deletes, and when: Kafka Streams' rule
// (StreamTask.purgeableOffsets over the active tasks, TaskManager.maybePurgeCommittedRecords, called
// from StreamThread.maybeCommit), on the orders application; the processing loop runs on fakes of
// the member, the fetcher, the producer and the admin client, on mocked timers; and which
// partitions a commit holds (those read since the last one; never one nothing was read of).
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { purgeableOffsets, repartitionSourceTopics, startTaskProcessor } from '../../src/cli/demo-data.js'
import { ordersApplication } from '../../src/cli/demo.js'
import type { Admin, RecordsToDelete } from '../../src/clients/admin/index.js'
import type { Fetcher, TopicPartitionPosition } from '../../src/clients/dataplane/fetcher.js'
import type { Producer } from '../../src/clients/dataplane/producer.js'
import type { IncomingRecord } from '../../src/clients/dataplane/records.js'
import type { StreamsMember, StreamsTasks } from '../../src/clients/streams/index.js'

const REPARTITION = 'demo-orders-orders-by-customer-repartition'

describe('the demo members’ repartition purge', () => {
  const app = ordersApplication()
  const repartition = repartitionSourceTopics(app.topology, app.applicationId)

  it('knows the orders application’s repartition topic by its full name', () => {
    assert.deepEqual([...repartition], [REPARTITION])
  })

  it('deletes before the committed offset of each repartition partition of its active tasks', () => {
    const active = [
      { topic: 'orders', partition: 0 },
      { topic: 'customers', partition: 1 },
      { topic: REPARTITION, partition: 1 },
      { topic: REPARTITION, partition: 2 },
    ]
    const committed = new Map([
      ['orders-0', 40],
      ['customers-1', 6],
      [`${REPARTITION}-1`, 17],
      [`${REPARTITION}-2`, 0],
    ])
    assert.deepEqual(purgeableOffsets(active, committed, repartition), [
      { topic: REPARTITION, partition: 1, offset: 17 },
      { topic: REPARTITION, partition: 2, offset: 0 },
    ])
  })

  it('deletes nothing of a partition it has not committed, nor of one it no longer owns', () => {
    const active = [
      { topic: REPARTITION, partition: 0 },
      { topic: REPARTITION, partition: 1 },
    ]
    // partition 0: owned, never committed by this member; partition 2: committed, then lost
    const committed = new Map([
      [`${REPARTITION}-1`, 9],
      [`${REPARTITION}-2`, 30],
    ])
    assert.deepEqual(purgeableOffsets(active, committed, repartition), [
      { topic: REPARTITION, partition: 1, offset: 9 },
    ])
    assert.deepEqual(purgeableOffsets(active, new Map([[`${REPARTITION}-0`, -1]]), repartition), [])
    assert.deepEqual(purgeableOffsets([], committed, repartition), [])
  })

  it('deletes nothing of an application without repartition topics', () => {
    assert.deepEqual(
      purgeableOffsets([{ topic: REPARTITION, partition: 0 }], new Map([[`${REPARTITION}-0`, 5]]), new Set()),
      [],
    )
  })
})

/** One member's processing loop of the orders application on fakes, on mocked timers. */
function startLoop(t: TestContext) {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 })
  const app = ordersApplication()
  const ends = new Map<string, number>() // the log end of each partition
  const state = {
    tasks: {
      activeTasks: [
        { subtopologyId: '0', partitions: [0] },
        { subtopologyId: '1', partitions: [0, 1] },
      ],
      standbyTasks: [],
      warmupTasks: [],
    } as StreamsTasks,
    commitFails: false,
    answer: (): void => undefined,
  }
  const commits: TopicPartitionPosition[][] = []
  const purges: RecordsToDelete[][] = []
  const record = { offset: 0, timestamp: 0, key: null, value: null, headers: [] } as IncomingRecord
  const fetcher = {
    // a long poll of 500 ms, then everything up to the log end
    fetch: async (positions: readonly TopicPartitionPosition[]) => {
      await new Promise((r) => setTimeout(r, 500))
      return positions.map((p) => {
        const end = Math.max(p.offset, ends.get(`${p.topic}-${p.partition}`) ?? 0)
        return {
          topic: p.topic,
          partition: p.partition,
          records: Array.from({ length: end - p.offset }, () => record),
          nextOffset: end,
          highWatermark: end,
          logStartOffset: 0,
          error: null,
        }
      })
    },
    commit: async (_: string, __: unknown, offsets: readonly TopicPartitionPosition[]) => {
      if (state.commitFails) throw new Error('commit failed')
      commits.push([...offsets])
    },
  } as unknown as Fetcher
  const admin = {
    listStreamsGroupOffsets: async () => [],
    listOffsets: (qs: readonly TopicPartitionPosition[]) => ({
      all: async () => qs.map((q) => ({ topic: q.topic, partition: q.partition, offset: 0n })),
    }),
    deleteRecords: (records: readonly RecordsToDelete[]) => {
      purges.push([...records])
      return { settled: () => new Promise<void>((resolve) => (state.answer = resolve)) }
    },
  } as unknown as Admin
  const member = { memberId: 'm1', memberEpoch: 1, tasks: () => state.tasks } as unknown as StreamsMember
  const processor = startTaskProcessor({
    member,
    applicationId: app.applicationId,
    topology: app.topology,
    handler: () => [],
    fetcher,
    producer: { send: async () => [] } as unknown as Producer,
    admin,
    log: () => undefined,
    purgeIntervalMs: 30_000,
  })
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r))
  }
  /** `n` rounds of the loop (one long poll each) */
  const rounds = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      await settle()
      t.mock.timers.tick(500)
    }
    await settle()
  }
  const stop = async (): Promise<void> => {
    const stopped = processor.stop()
    await rounds(1)
    state.answer()
    await stopped
  }
  return { ends, state, commits, purges, rounds, stop }
}

describe('the demo members’ commits', () => {
  it('commits only the partitions whose records it processed since its last commit', async (t) => {
    const loop = startLoop(t)
    const sorted = (c: readonly TopicPartitionPosition[] | undefined) =>
      [...(c ?? [])].sort((a, b) =>
        a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition,
      )

    // Owned: orders 0, customers 0 and 1, the repartition topic's 0 and 1; read: orders 0 and
    // repartition 0. The others keep the group's committed offset (here none).
    loop.ends.set('orders-0', 3)
    loop.ends.set(`${REPARTITION}-0`, 5)
    await loop.rounds(1)
    assert.deepEqual(sorted(loop.commits[0]), [
      { topic: REPARTITION, partition: 0, offset: 5 },
      { topic: 'orders', partition: 0, offset: 3 },
    ])

    // Nothing read: nothing committed.
    await loop.rounds(6)
    assert.equal(loop.commits.length, 1)

    // Customers 1 read: it alone, at its next commit.
    loop.ends.set('customers-1', 2)
    await loop.rounds(3)
    assert.deepEqual(loop.commits.slice(1), [[{ topic: 'customers', partition: 1, offset: 2 }]])

    // A failed commit keeps what it held for the next one, with what was read meanwhile.
    loop.state.commitFails = true
    loop.ends.set(`${REPARTITION}-1`, 4)
    await loop.rounds(3)
    loop.state.commitFails = false
    loop.ends.set('orders-0', 7)
    await loop.rounds(3)
    assert.deepEqual(sorted(loop.commits[2]), [
      { topic: REPARTITION, partition: 1, offset: 4 },
      { topic: 'orders', partition: 0, offset: 7 },
    ])
    assert.equal(loop.commits.length, 3)
    await loop.stop()
  })
})

describe('the demo members’ purge schedule', () => {
  it('purges after a commit, then not before the interval, nor while a purge is unanswered', async (t) => {
    const { ends, state, commits, purges, rounds, stop } = startLoop(t)

    // The first round commits and, the last purge being 0, purges at once what it committed.
    ends.set('orders-0', 3)
    ends.set(`${REPARTITION}-0`, 5)
    ends.set(`${REPARTITION}-1`, 1)
    await rounds(1)
    assert.equal(commits.length, 1)
    assert.deepEqual(purges, [
      [
        { topic: REPARTITION, partition: 0, offset: 5 },
        { topic: REPARTITION, partition: 1, offset: 1 },
      ],
    ])

    // Commits go on every second. The try 30.5 s later finds the first purge unanswered: it sends
    // nothing, and the next try is due 30 s after it, answered or not.
    ends.set(`${REPARTITION}-0`, 9)
    await rounds(62)
    assert.ok(commits.length > 1)
    assert.equal(purges.length, 1)
    state.answer()
    await rounds(1)
    assert.equal(purges.length, 1)
    // Exactly 30 s after that try: not yet (more than the interval is needed).
    await rounds(58)
    assert.equal(purges.length, 1)
    // Then a purge up to the newest committed offsets.
    await rounds(1)
    assert.deepEqual(purges[1], [
      { topic: REPARTITION, partition: 0, offset: 9 },
      { topic: REPARTITION, partition: 1, offset: 1 },
    ])
    state.answer()

    // Not again before more than the interval has passed.
    ends.set(`${REPARTITION}-1`, 4)
    await rounds(59)
    assert.equal(purges.length, 2)

    // Partition 1 read to 7 but not committed (commits fail), partition 0 revoked: the purge is
    // of partition 1 alone, up to its committed offset 4.
    state.commitFails = true
    ends.set(`${REPARTITION}-1`, 7)
    state.tasks = { ...state.tasks, activeTasks: [{ subtopologyId: '1', partitions: [1] }] }
    await rounds(4)
    assert.deepEqual(purges.slice(2), [[{ topic: REPARTITION, partition: 1, offset: 4 }]])

    await stop()
  })
})
