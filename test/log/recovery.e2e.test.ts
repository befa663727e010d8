// Start-up after a crash: a real child process appending to a file-engine log is killed with
// SIGKILL; the reopened log holds every acknowledged batch, whole, in order, and no torn batch is
// ever served. Also: a torn tail written by hand is truncated; a clean shutdown opens without a
// scan; producer state is rebuilt from the log after a crash.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { isCrcValid, splitBatches } from '../../src/log/batch.js'
import { crc32c } from '../../src/log/compression.js'
import { DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { createLogManager, type LogManagerImpl } from '../../src/log/manager.js'
import type { LogConfig } from '../../src/log/types.js'
import { readAll } from './contract.js'
import { batchOf, markerOf, records } from './helpers.js'

const child = fileURLToPath(new URL('./fixtures/append-child.ts', import.meta.url))

async function runAndKill(
  dir: string,
  tag: string,
  flushMessages: string,
  killAfterAcks: number,
  mode = '',
): Promise<number> {
  const proc = spawn(process.execPath, ['--import', 'tsx', child, dir, tag, flushMessages, mode], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  proc.stderr.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    proc.on('exit', (_c, signal) => resolve(signal)),
  )
  let lastAck = -1
  let hung = false
  // Only bounds a hang: on a loaded machine a child's start-up alone has taken minutes.
  const timeout = setTimeout(() => {
    hung = true
    proc.kill('SIGKILL')
  }, 300_000)
  for await (const line of createInterface({ input: proc.stdout })) {
    const m = /^ack (\d+)$/.exec(line)
    if (m === null) continue
    const n = Number(m[1])
    assert.equal(n, lastAck + 1)
    lastAck = n
    if (n + 1 >= killAfterAcks) {
      proc.kill('SIGKILL')
      break
    }
  }
  clearTimeout(timeout)
  const signal = await exited
  assert.equal(signal, 'SIGKILL', `child did not die by SIGKILL (stderr: ${stderr})`)
  assert.ok(!hung, `no ${killAfterAcks} acknowledgements (last ${lastAck}, stderr: ${stderr})`)
  return lastAck
}

async function openLog(dir: string, configs: Partial<LogConfig> = {}): Promise<LogManagerImpl> {
  const m = createLogManager(
    {
      ...DEFAULT_LOG_MANAGER_CONFIG,
      logDirs: [dir],
      defaults: resolveLogConfig(DEFAULT_LOG_MANAGER_CONFIG.defaults, {
        segmentBytes: 16 * 1024,
        ...configs,
      }),
    },
    { noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('t', 'topic-id', 0, 3)
  return m
}

/**
 * A partition reopened after a kill -9 of append-child.ts: dense offsets, whole batches of
 * `values` records ("<tag>/b<n>", "<tag>/b<n>/2", …) with valid CRCs; adds each batch's tag to `found`.
 */
async function checkRecovered(
  m: LogManagerImpl,
  part: number,
  values: number,
  found: Set<string>,
): Promise<void> {
  const p = m.partition('t', part)!
  let expectedBase = 0
  for (const b of await readAll(p, 0)) {
    assert.equal(b.baseOffset, expectedBase, 'offsets are dense')
    expectedBase = b.lastOffset + 1
    assert.equal(b.values.length, values, 'only whole batches')
    assert.equal(b.values[1], `${b.values[0]}/2`)
    found.add(b.values[0])
  }
  // Every stored byte is a whole batch with a valid CRC.
  const r = await p.read(0, 1 << 30, { minOneMessage: true, isolationLevel: 'read_uncommitted' })
  const { positions } = splitBatches(r.records)
  for (const pos of positions) assert.ok(isCrcValid(r.records, pos, crc32c))
}

for (const [flushMessages, mode] of [
  ['9223372036854775807', ''],
  ['1', ''],
  ['9223372036854775807', 'coalesce'],
  ['1', 'coalesce'],
]) {
  test(`kill -9 while appending (flush.messages=${flushMessages === '1' ? '1' : 'default'}${mode === '' ? '' : `, ${mode}d`}): every acknowledged batch survives, none is torn`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topograph-log-kill-'))
    try {
      const acknowledged: string[] = []
      for (const tag of ['first', 'second']) {
        const last = await runAndKill(dir, tag, flushMessages, 300, mode)
        assert.ok(last >= 299)
        for (let n = 0; n <= last; n++) acknowledged.push(`${tag}/b${n}`)
        assert.ok(!existsSync(join(dir, '.kafka_cleanshutdown')))
        const m = await openLog(dir)
        const found = new Set<string>()
        for (let part = 0; part < 3; part++) await checkRecovered(m, part, 2, found)
        for (const a of acknowledged) assert.ok(found.has(a), `acknowledged ${a} is missing`)
        // The next producer sequence continues from the rebuilt producer state.
        await m.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
}

test('kill -9 while appending with pages read ahead: the zeros past the data are cut, every acknowledged batch survives', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-kill-ahead-'))
  try {
    // 500 acknowledgements: each partition rolled its first segment of 2 MiB (about 127 batches)
    // and is far past the first chunk of the next one (reads ahead start after a chunk).
    const last = await runAndKill(dir, 'first', '9223372036854775807', 500, 'read-ahead')
    assert.ok(last >= 499)
    // The kill left active segments longer than their data: zeros past the last batch.
    const active = [0, 1, 2].map((part) => {
      const logs = readdirSync(join(dir, `t-${part}`))
        .filter((f) => f.endsWith('.log'))
        .sort()
      return join(dir, `t-${part}`, logs[logs.length - 1])
    })
    assert.ok(
      active.some((f) => readFileSync(f).at(-1) === 0),
      'no active segment ends in zeros read ahead',
    )
    const m = await openLog(dir, { segmentBytes: 2 * 1024 * 1024 })
    const found = new Set<string>()
    for (let part = 0; part < 3; part++) {
      await checkRecovered(m, part, 3, found)
      // Every segment file holds its data and nothing else.
      const p = m.partition('t', part)!
      const files = readdirSync(join(dir, `t-${part}`)).filter((f) => f.endsWith('.log'))
      const onDisk = files.reduce((n, f) => n + statSync(join(dir, `t-${part}`, f)).size, 0)
      assert.equal(onDisk, p.sizeInBytes)
    }
    for (let n = 0; n <= last; n++) assert.ok(found.has(`first/b${n}`), `acknowledged first/b${n} is missing`)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a torn tail (partial batch) is truncated at start-up and never served', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-torn-'))
  try {
    let m = await openLog(dir)
    const p = m.partition('t', 0)!
    for (let i = 0; i < 5; i++) await p.append(batchOf(records(2, `x${i}`)), { now: Date.now() })
    // A recent timestamp: producers idle longer than producer.id.expiration.ms are not restored.
    const ts = Date.now()
    await p.append(
      batchOf(records(1), { producerId: 77, producerEpoch: 0, baseSequence: 0, timestamp: ts }),
      { now: ts },
    )
    await m.close()
    // Simulate a crash: no clean-shutdown marker, and half a batch at the end of the segment.
    rmSync(join(dir, '.kafka_cleanshutdown'))
    const logs = readdirSync(join(dir, 't-0')).filter((f) => f.endsWith('.log'))
    const seg = join(dir, 't-0', logs.sort()[logs.length - 1])
    const sizeBefore = statSync(seg).size
    appendFileSync(seg, batchOf(records(3, 'torn')).subarray(0, 40))
    m = await openLog(dir)
    const q = m.partition('t', 0)!
    assert.equal(q.logEndOffset, 11)
    assert.equal(statSync(seg).size, sizeBefore)
    const all = await readAll(q, 0)
    assert.equal(all.length, 6)
    const a = await q.append(batchOf(records(1, 'after')), { now: Date.now() })
    assert.equal(a.baseOffset, 11)
    const dup = await q.append(
      batchOf(records(1), { producerId: 77, producerEpoch: 0, baseSequence: 0, timestamp: ts }),
      {
        now: Date.now(),
      },
    )
    assert.equal(dup.duplicate, true)
    assert.equal(dup.baseOffset, 10)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a batch with a bad CRC past the recovery point is cut off with everything after it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-crc-'))
  try {
    let m = await openLog(dir, { segmentBytes: 1024 * 1024 })
    const p = m.partition('t', 0)!
    const sizes: number[] = []
    for (let i = 0; i < 6; i++) {
      await p.append(batchOf(records(2, `c${i}`)), { now: Date.now() })
      sizes.push(p.sizeInBytes)
    }
    await m.close()
    rmSync(join(dir, '.kafka_cleanshutdown'))
    writeFileSync(join(dir, 'recovery-point-offset-checkpoint'), '0\n0\n')
    const seg = join(dir, 't-0', '00000000000000000000.log')
    const { openSync, writeSync, closeSync } = await import('node:fs')
    const fd = openSync(seg, 'r+')
    writeSync(fd, Uint8Array.of(0xff), 0, 1, sizes[2] + 70) // inside the 4th batch's records
    closeSync(fd)
    m = await openLog(dir)
    const q = m.partition('t', 0)!
    assert.equal(q.logEndOffset, 6, 'three whole batches of 2 records are left')
    assert.equal(statSync(seg).size, sizes[2])
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('after a clean shutdown the logs open without a scan (a damaged byte is not even looked at)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-clean-'))
  try {
    let m = await openLog(dir)
    const p = m.partition('t', 0)!
    for (let i = 0; i < 6; i++) await p.append(batchOf(records(2, `c${i}`)), { now: Date.now() })
    const size = p.sizeInBytes
    await m.close()
    assert.ok(existsSync(join(dir, '.kafka_cleanshutdown')))
    const seg = join(dir, 't-0', '00000000000000000000.log')
    const { openSync, writeSync, closeSync } = await import('node:fs')
    const fd = openSync(seg, 'r+')
    writeSync(fd, Uint8Array.of(0xff), 0, 1, 75) // inside the first batch's records
    closeSync(fd)
    m = await openLog(dir)
    assert.ok(!existsSync(join(dir, '.kafka_cleanshutdown')), 'the marker is consumed at open')
    const q = m.partition('t', 0)!
    assert.equal(q.logEndOffset, 12)
    assert.equal(q.sizeInBytes, size)
    const files = readdirSync(join(dir, 't-0')).sort()
    assert.deepEqual(files, [
      '00000000000000000000.index',
      '00000000000000000000.log',
      '00000000000000000000.timeindex',
      '00000000000000000012.aborted',
      '00000000000000000012.snapshot',
      'leader-epoch-checkpoint',
      'partition.metadata',
    ])
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a clean interrupted before its swap leaves the old segment; the stray .cleaned file is removed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-swap-'))
  try {
    let m = await openLog(dir)
    const p = m.partition('t', 0)!
    for (let i = 0; i < 3; i++) await p.append(batchOf(records(2, `s${i}`)), { now: Date.now() })
    await m.close()
    rmSync(join(dir, '.kafka_cleanshutdown'))
    writeFileSync(join(dir, 't-0', '00000000000000000000.log.cleaned'), 'half a rewrite')
    m = await openLog(dir)
    assert.ok(!existsSync(join(dir, 't-0', '00000000000000000000.log.cleaned')))
    assert.equal(m.partition('t', 0)!.logEndOffset, 6)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('after a crash, open transactions and aborted transactions are rebuilt from the log', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-txn-'))
  try {
    let m = await openLog(dir)
    const p = m.partition('t', 0)!
    const now = Date.now()
    const txn = (pid: number) =>
      batchOf(records(1), {
        producerId: pid,
        producerEpoch: 0,
        baseSequence: 0,
        transactional: true,
        timestamp: now,
      })
    await p.append(txn(1), { now }) // 0
    await p.append(markerOf(1, 0, false, 0, now), { now, origin: 'coordinator' }) // 1: abort
    await p.append(txn(2), { now }) // 2, left open
    await m.close()
    // A crash: no clean-shutdown marker and no snapshot to start from.
    rmSync(join(dir, '.kafka_cleanshutdown'))
    for (const f of readdirSync(join(dir, 't-0'))) {
      if (f.endsWith('.snapshot') || f.endsWith('.aborted')) rmSync(join(dir, 't-0', f))
    }
    m = await openLog(dir)
    const q = m.partition('t', 0)!
    assert.equal(q.lastStableOffset, 2)
    const r = await q.read(0, 1 << 20, { minOneMessage: true, isolationLevel: 'read_committed' })
    assert.deepEqual(r.abortedTransactions, [{ producerId: 1, firstOffset: 0 }])
    assert.equal(q.producerStates().find((s) => s.producerId === 2)?.currentTxnStartOffset, 2)
    await m.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
