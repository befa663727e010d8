// LogManager on the file engine: several log directories, background retention on its own timer,
// config checks and the Kafka key table.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  checkLogConfig,
  DEFAULT_LOG_CONFIG,
  DEFAULT_LOG_MANAGER_CONFIG,
  LOG_CONFIG_KEYS,
  resolveLogConfig,
} from '../../src/log/config.js'
import { type FileLayer, FileLogStorage, NODE_FILE_LAYER } from '../../src/log/file.js'
import { createLogManager } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import { countingLayer } from './fs-probes.js'
import { batchOf, records } from './helpers.js'

test('several log.dirs: partitions spread over them, DescribeLogDirs lists each with its own', async () => {
  const root = mkdtempSync(join(tmpdir(), 'topograph-dirs-'))
  try {
    const dirs = [join(root, 'a'), join(root, 'b')]
    const m = createLogManager({ ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: dirs }, { noBackgroundJobs: true })
    await m.open()
    await m.createPartitions('t', 'id', 0, 4)
    for (let i = 0; i < 4; i++) await m.partition('t', i)!.append(batchOf(records(1)), { now: Date.now() })
    const stats = await m.logDirs()
    assert.deepEqual(
      stats.map((d) => d.path),
      dirs,
    )
    assert.deepEqual(
      stats.map((d) => d.partitions.length),
      [2, 2],
    )
    for (const d of stats) {
      assert.equal(d.errorCode, 0)
      assert.ok(d.totalBytes > 0 && d.usableBytes > 0)
      for (const p of d.partitions) assert.ok(readdirSync(d.path).includes(`t-${p.partition}`))
    }
    await m.close()
    // Reopened: each partition is found where it is.
    const m2 = createLogManager({ ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: dirs }, { noBackgroundJobs: true })
    await m2.open()
    await m2.createPartitions('t', 'id', 0, 4)
    for (let i = 0; i < 4; i++) assert.equal(m2.partition('t', i)!.logEndOffset, 1)
    await m2.close()
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test('retention runs by itself every log.retention.check.interval.ms', async () => {
  const root = mkdtempSync(join(tmpdir(), 'topograph-ret-'))
  try {
    const m = createLogManager({
      ...DEFAULT_LOG_MANAGER_CONFIG,
      logDirs: [root],
      retentionCheckIntervalMs: 50,
      defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, { segmentBytes: 200, retentionMs: 1000 }),
    })
    await m.open()
    await m.createPartitions('t', 'id', 0, 1)
    const p = m.partition('t', 0)!
    const old = Date.now() - 60000
    for (let i = 0; i < 5; i++) await p.append(batchOf(records(1), { timestamp: old }), { now: Date.now() })
    // The manager's timers are unref'd (they never keep a process alive): a ref'd guard keeps this
    // one running while it waits, and fails it if retention never comes.
    await new Promise<void>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error('no retention pass within 60 s')), 60_000)
      const off = p.addListener((e) => {
        if (e === 'start-offset' && p.logStartOffset === 5) {
          off()
          clearTimeout(guard)
          resolve()
        }
      })
    })
    assert.equal(p.logEndOffset, 5)
    await m.close()
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test('config: Kafka defaults pass the checks; bad values are named with Kafka’s message', () => {
  assert.equal(checkLogConfig(DEFAULT_LOG_CONFIG), null)
  assert.equal(
    checkLogConfig({ ...DEFAULT_LOG_CONFIG, minCleanableDirtyRatio: 2 }),
    'Invalid value 2 for configuration min.cleanable.dirty.ratio: Value must be between 0 and 1',
  )
  assert.match(
    checkLogConfig({ ...DEFAULT_LOG_CONFIG, cleanupPolicy: ['bogus' as never] })!,
    /cleanup\.policy/,
  )
  // Every LogConfig field has one Kafka key.
  assert.deepEqual(new Set(LOG_CONFIG_KEYS.map((k) => k.field)), new Set(Object.keys(DEFAULT_LOG_CONFIG)))
})

/** How many turns the event loop made while `work` ran. */
async function loopTurnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0
  let done = false
  const turn = (): void => {
    turns++
    if (!done) setImmediate(turn)
  }
  setImmediate(turn)
  await work()
  done = true
  return turns
}

test('creating many partitions keeps the event loop turning and is durable', async () => {
  // A CreateTopics of 1,000 partitions (well under topic.max.partitions) used to write two files
  // with a synchronous fsync per partition, one partition after the other: the event loop, and so
  // every connection of the server, was held for the whole creation (16 s on the development
  // machine). The loop must keep turning while partitions are created.
  const root = mkdtempSync(join(tmpdir(), 'topograph-many-'))
  try {
    const m = createLogManager({ ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [root] }, { noBackgroundJobs: true })
    await m.open()
    const count = 200
    const turns = await loopTurnsDuring(() => m.createPartitions('many', 'id-many', 0, count))
    // Partitions open 32 at a time, each group waiting for its files' fsyncs on the thread pool:
    // at least one turn per group. How many more depends on how fast the disk syncs (a fast one
    // finishes a whole group in one turn); the synchronous creation gave none.
    assert.ok(
      turns >= Math.floor(count / 32),
      `the event loop turned ${turns} times while ${count} partitions were created`,
    )
    for (let i = 0; i < count; i++) {
      const dir = join(root, `many-${i}`)
      assert.deepEqual(
        readdirSync(dir)
          .filter((n) => !n.includes('.log') && !n.includes('index'))
          .sort(),
        ['leader-epoch-checkpoint', 'partition.metadata'],
      )
      assert.equal(m.partition('many', i)!.logEndOffset, 0)
    }
    await m.close()
    const m2 = createLogManager(
      { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [root] },
      { noBackgroundJobs: true },
    )
    await m2.open()
    await m2.createPartitions('many', 'id-many', 0, count)
    for (let i = 0; i < count; i++)
      await m2.partition('many', i)!.append(batchOf(records(1)), { now: Date.now() })
    assert.equal(m2.partition('many', count - 1)!.logEndOffset, 1)
    await m2.close()
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

/** A manager opened on `root` finds partition 0 of `topic` empty, starting at offset 0. */
async function assertOpensEmpty(root: string, topic: string, topicId: string): Promise<void> {
  const m = createLogManager({ ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [root] }, { noBackgroundJobs: true })
  await m.open()
  await m.createPartitions(topic, topicId, 0, 1)
  assert.equal(m.partition(topic, 0)!.logStartOffset, 0)
  assert.equal(m.partition(topic, 0)!.logEndOffset, 0)
  await m.close()
}

test('creating partitions makes no file call on the event loop', async () => {
  // Each new partition's directory, small files and segment file were created with synchronous
  // calls, 32 partitions in one turn of the event loop (about 1.3 ms per new inode at load 20: a
  // stall of 0.2–0.8 s while a topic of 1,000 partitions was created, seen by every connection).
  // Counted, not timed: the synchronous file calls made while 500 partitions are created (7,500
  // before, up to 248 in one turn).
  const root = mkdtempSync(join(tmpdir(), 'topograph-nostall-'))
  const { layer, during } = countingLayer()
  try {
    const m = createLogManager(
      { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [root] },
      { storage: new FileLogStorage([root], { fs: layer }), noBackgroundJobs: true },
    )
    await m.open()
    const count = 500
    // A 10 ms timer alongside, for the message only (wall time depends on the machine's load).
    let last = performance.now()
    let longestGap = 0
    const timer = setInterval(() => {
      const t = performance.now()
      longestGap = Math.max(longestGap, t - last)
      last = t
    }, 10)
    const seen = await during(() => m.createPartitions('many', 'id-many', 0, count))
    clearInterval(timer)
    assert.deepEqual(
      seen.calls,
      {},
      `synchronous file calls, at most ${seen.mostInOneTurn} in one turn; the 10 ms timer's longest gap ${Math.round(longestGap)} ms`,
    )
    for (let i = 0; i < count; i++) assert.equal(m.partition('many', i)!.logEndOffset, 0)
    await m.close()
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

/**
 * A log manager on a fresh directory of its own (no background jobs, file calls through `fs` when
 * given), closed and removed after `fn`.
 */
async function withOpenManager(
  prefix: string,
  fn: (m: ReturnType<typeof createLogManager>, root: string) => Promise<void>,
  fs?: FileLayer,
): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), prefix))
  try {
    const storage = fs === undefined ? undefined : new FileLogStorage([root], { fs })
    const m = createLogManager(
      { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [root] },
      { ...(storage === undefined ? {} : { storage }), noBackgroundJobs: true },
    )
    await m.open()
    try {
      await fn(m, root)
    } finally {
      await m.close()
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

test('deleting partitions whose start offset moved writes no checkpoint on the event loop', async () => {
  // A deleted partition's entry left the log-start-offset checkpoint with a synchronous write and
  // fsync of the whole file, once per partition in the caller's turn: a DeleteTopics of a topic
  // whose retention or DeleteRecords had moved its partitions' start held the event loop for an
  // fsync per partition.
  const root = mkdtempSync(join(tmpdir(), 'topograph-forget-'))
  const { layer, during } = countingLayer()
  try {
    const config = { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [root] }
    const m = createLogManager(config, {
      storage: new FileLogStorage([root], { fs: layer }),
      noBackgroundJobs: true,
    })
    await m.open()
    const count = 50
    await m.createPartitions('moved', 'id-moved', 0, count)
    for (let i = 0; i < count; i++) {
      const p = m.partition('moved', i)!
      await p.append(batchOf(records(3)), { now: Date.now() })
      assert.equal((await p.deleteRecordsBefore(2)).errorCode, 0)
    }
    const seen = await during(() => m.deleteTopic('moved'))
    assert.equal(seen.calls.fsyncSync ?? 0, 0, JSON.stringify(seen))
    assert.equal(seen.calls.writeSync ?? 0, 0, JSON.stringify(seen))
    // The entries are gone from the file: a topic of that name starts from offset 0.
    await m.createPartitions('moved', 'id-again', 0, 1)
    await m.close()
    await assertOpensEmpty(root, 'moved', 'id-again')
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test('deleting compacted partitions renames and writes no file on the event loop', async () => {
  // A deletion renamed each partition's directory, and read and rewrote the cleaner offset
  // checkpoint, with synchronous calls in the caller's turn: 30–50 ms on a CPU for a DeleteTopics
  // of 1,000 partitions, seen by every connection. Counted, not timed.
  const { layer, during } = countingLayer()
  await withOpenManager(
    'topograph-del-sync-',
    async (m, root) => {
      const count = 40
      await m.createPartitions('kept', 'id-kept', 0, 1)
      await (m.partition('kept', 0)! as PartitionLogImpl).store.setCleanerCheckpoint(7)
      await m.createPartitions('compacted', 'id-old', 0, count)
      for (let i = 0; i < count; i++) {
        const p = m.partition('compacted', i)! as PartitionLogImpl
        await p.append(batchOf(records(3)), { now: Date.now() })
        await p.store.setCleanerCheckpoint(2)
      }
      const seen = await during(() => m.deleteTopic('compacted'))
      // Closing a segment's descriptor is the one call left in the caller's turn: it does no I/O.
      const { closeSync = 0, ...others } = seen.calls
      assert.deepEqual(others, {}, 'synchronous file calls while the topic was deleted')
      assert.ok(closeSync <= count, `${closeSync} descriptors closed`)
      assert.deepEqual(
        readdirSync(root).filter((n) => n.startsWith('compacted')),
        [],
      )
      // The file holds the other partition's entry and none of the deleted ones.
      const cleaner = readFileSync(join(root, 'cleaner-offset-checkpoint'), 'utf8')
      assert.match(cleaner, /^kept 0 7$/m)
      assert.doesNotMatch(cleaner, /^compacted /m)
    },
    layer,
  )
})

test('a topic made again while the old directory is still being renamed away opens empty', async () => {
  // The rename of a deleted partition's directory runs on the threadpool: a partition of the same
  // name created meanwhile must not open the old directory's segments as its own.
  let release: () => void = () => {}
  const held = new Promise<void>((r) => {
    release = r
  })
  const layer: FileLayer = {
    ...NODE_FILE_LAYER,
    rename: (from, to, cb) => {
      if (to.endsWith('-delete')) void held.then(() => NODE_FILE_LAYER.rename(from, to, cb))
      else NODE_FILE_LAYER.rename(from, to, cb)
    },
  }
  try {
    await withOpenManager(
      'topograph-del-rename-',
      async (m) => {
        await m.createPartitions('t', 'id-old', 0, 1)
        await m.partition('t', 0)!.append(batchOf(records(5)), { now: Date.now() })
        await m.deleteTopic('t', { untilRemoved: false })
        const again = m.createPartitions('t', 'id-new', 0, 1)
        // The new partition waits for the rename: nothing of it is open yet.
        await new Promise((r) => setTimeout(r, 50))
        assert.equal(m.partition('t', 0), undefined)
        release()
        await again
        assert.equal(m.partition('t', 0)!.topicId, 'id-new')
        assert.equal(m.partition('t', 0)!.logEndOffset, 0)
      },
      layer,
    )
  } finally {
    release()
  }
})

test('a start offset left in the checkpoint for a partition no longer on disk is dropped at open', async () => {
  // A deletion renames the partition's directory at once and rewrites the log-start-offset
  // checkpoint off the event loop: a crash between the two leaves the entry of a partition that is
  // gone. A new topic of that name must not start at it.
  const root = mkdtempSync(join(tmpdir(), 'topograph-stale-start-'))
  try {
    const config = { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [root] }
    const m = createLogManager(config, { noBackgroundJobs: true })
    await m.open()
    await m.createPartitions('t', 'id-old', 0, 1)
    const p = m.partition('t', 0)!
    await p.append(batchOf(records(5)), { now: Date.now() })
    assert.equal((await p.deleteRecordsBefore(3)).errorCode, 0)
    await m.close()
    // What the crash leaves: the directory gone, the entry still in the file.
    rmSync(join(root, 't-0'), { recursive: true, force: true })
    assert.match(readFileSync(join(root, 'log-start-offset-checkpoint'), 'utf8'), /^t 0 3$/m)
    await assertOpensEmpty(root, 't', 'id-new')
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test("a deleted partition's cleaner offset does not carry over to a new topic of that name", async () => {
  // The cleaner-offset-checkpoint kept a deleted partition's entry: a compacted topic created again
  // under the same name took the old topic's cleaned-up-to offset as its own, and the cleaner
  // treated the new log below it as already compacted.
  await withOpenManager('topograph-forget-cleaner-', async (m, root) => {
    await m.createPartitions('c', 'id-old', 0, 2)
    const p = m.partition('c', 0)! as PartitionLogImpl
    await p.append(batchOf(records(5)), { now: Date.now() })
    await p.store.setCleanerCheckpoint(4)
    await (m.partition('c', 1)! as PartitionLogImpl).store.setCleanerCheckpoint(0)
    await m.deleteTopic('c')
    assert.doesNotMatch(readFileSync(join(root, 'cleaner-offset-checkpoint'), 'utf8'), /^c [01] /m)
    await m.createPartitions('c', 'id-new', 0, 1)
    assert.equal((m.partition('c', 0)! as PartitionLogImpl).store.cleanerCheckpoint(), 0)
  })
})

test("a partition made again under a deleted one's name never sits next to its recovery point", async () => {
  // A deletion dropped the partition's recovery point in memory only; the file kept it until the
  // next periodic checkpoint. A crash after a topic of that name was created again left the new
  // log next to the old log's recovery point, and recovery would not have scanned the new log's
  // segments below it. What the files hold right after the re-creation is what such a crash leaves.
  await withOpenManager('topograph-forget-recovery-', async (m, root) => {
    await m.createPartitions('r', 'id-old', 0, 1)
    const p = m.partition('r', 0)! as PartitionLogImpl
    await p.append(batchOf(records(5)), { now: Date.now() })
    await p.flush()
    await m.storage.checkpoint()
    const file = join(root, 'recovery-point-offset-checkpoint')
    assert.match(readFileSync(file, 'utf8'), /^r 0 5$/m)
    await m.deleteTopic('r')
    await m.createPartitions('r', 'id-new', 0, 1)
    assert.doesNotMatch(readFileSync(file, 'utf8'), /^r 0 /m)
  })
})

test('deleting a topic of many partitions keeps the event loop turning', async () => {
  // DeleteTopics of topics with thousands of partitions removed every partition's directory with a
  // synchronous recursive rm, one after the other: the server accepted no connection for more than
  // 10 s in the fuzzing campaign.
  const root = mkdtempSync(join(tmpdir(), 'topograph-del-'))
  try {
    const m = createLogManager({ ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [root] }, { noBackgroundJobs: true })
    await m.open()
    const count = 200
    await m.createPartitions('gone', 'id-gone', 0, count)
    const turns = await loopTurnsDuring(() => m.deleteTopic('gone'))
    assert.ok(
      turns >= count / 4,
      `the event loop turned ${turns} times while ${count} partitions were deleted`,
    )
    assert.deepEqual(
      readdirSync(root).filter((n) => n.startsWith('gone')),
      [],
    )
    assert.equal(m.partition('gone', 0), undefined)
    await m.close()
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test('a deletion asked while the topic is still opening stops it; the next creation follows', async () => {
  // The catalog answers a topic change before (or without) waiting for its logs, so a DeleteTopics
  // can come while the CreateTopics before it is still opening partitions: the opening stops, the
  // deletion takes what was opened, and a creation of the same name asked after both comes last.
  const root = mkdtempSync(join(tmpdir(), 'topograph-churn-'))
  try {
    const m = createLogManager({ ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [root] }, { noBackgroundJobs: true })
    await m.open()
    const first = m.createPartitions('t', 'id-1', 0, 400)
    const deleted = m.deleteTopic('t')
    const again = m.createPartitions('t', 'id-2', 0, 3)
    await Promise.all([first, again])
    await deleted
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => m.partition('t', i)?.topicId),
      ['id-2', 'id-2', 'id-2', undefined],
    )
    assert.deepEqual(
      readdirSync(root)
        .filter((n) => n.startsWith('t-'))
        .sort(),
      ['t-0', 't-1', 't-2'],
    )
    // A creation still opening when the manager closes stops too, and close waits for it.
    const late = m.createPartitions('late', 'id-late', 0, 400)
    await m.close()
    await late
    const opened = readdirSync(root).filter((n) => n.startsWith('late-')).length
    assert.ok(opened < 400, `${opened} partitions of late were opened after close began`)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test('partitions on disk that no topic opened are removed as strays', async () => {
  // A crash between a DeleteTopics' durable record and the renaming of its partitions leaves
  // their data behind; the next start opens the catalog's topics and removes the rest.
  const root = mkdtempSync(join(tmpdir(), 'topograph-stray-'))
  try {
    const m = createLogManager({ ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [root] }, { noBackgroundJobs: true })
    await m.open()
    await m.createPartitions('kept', 'id-kept', 0, 4)
    await m.createPartitions('dropped', 'id-dropped', 0, 2)
    await m.close()
    const m2 = createLogManager(
      { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [root] },
      { noBackgroundJobs: true },
    )
    await m2.open()
    await m2.createPartitions('kept', 'id-kept', 0, 2)
    assert.deepEqual((await m2.removeStrayPartitions()).sort(), [
      'dropped-0',
      'dropped-1',
      'kept-2',
      'kept-3',
    ])
    assert.deepEqual(
      readdirSync(root)
        .filter((n) => /-\d+$/.test(n))
        .sort(),
      ['kept-0', 'kept-1'],
    )
    assert.deepEqual(await m2.removeStrayPartitions(), [])
    await m2.close()
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})
