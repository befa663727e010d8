// kill -9 of a process while its log cleaner swaps a cleaned segment in or writes the producer
// snapshot that goes with a clean (test/log/fixtures/cleaner-child.ts kills itself with SIGKILL
// just before or just after either rename, or the rename that takes away a segment left empty). The reopened log serves only whole batches with valid
// CRCs, keeps the latest record of every key, and the idempotent producer's state survived: its
// last batch sent again is a duplicate (its original offset, nothing written), the next sequence
// is accepted, and a sequence gap is still refused. The same holds after the cleaner runs again.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { isCrcValid, splitBatches } from '../../src/log/batch.js'
import { crc32c } from '../../src/log/compression.js'
import { DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { createLogManager, type LogManagerImpl } from '../../src/log/manager.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import { readAll } from './contract.js'
import { BATCHES, CLEANER_TEST_CONFIG, type KillPoint, producerBatch } from './fixtures/cleaner-shared.js'

const child = fileURLToPath(new URL('./fixtures/cleaner-child.ts', import.meta.url))

async function runAndKill(dir: string, point: KillPoint, now: number): Promise<Map<number, number>> {
  const proc = spawn(process.execPath, ['--import', 'tsx', child, dir, point, String(now)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  proc.stderr.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  )
  // Only bounds a hang: on a loaded machine a child's start-up alone has taken minutes.
  const timeout = setTimeout(() => proc.kill('SIGKILL'), 300_000)
  const acked = new Map<number, number>()
  let armed = false
  for await (const line of createInterface({ input: proc.stdout })) {
    const m = /^ack (\d+) (\d+)$/.exec(line)
    if (m !== null) acked.set(Number(m[1]), Number(m[2]))
    if (line === 'armed') armed = true
  }
  const exit = await exited
  clearTimeout(timeout)
  assert.ok(armed, `the child never armed the kill point (stderr: ${stderr})`)
  assert.equal(
    exit.signal,
    'SIGKILL',
    `the child died by SIGKILL at ${point} (exit ${exit.code}, stderr: ${stderr})`,
  )
  assert.equal(acked.size, BATCHES)
  return acked
}

async function openLog(dir: string): Promise<LogManagerImpl> {
  const m = createLogManager(
    {
      ...DEFAULT_LOG_MANAGER_CONFIG,
      logDirs: [dir],
      defaults: resolveLogConfig(DEFAULT_LOG_MANAGER_CONFIG.defaults, CLEANER_TEST_CONFIG),
    },
    { noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('t', 'topic-id', 0, 1, CLEANER_TEST_CONFIG)
  return m
}

/** Whole batches, valid CRCs, and the latest record of every key at its acknowledged offset. */
async function checkLog(m: LogManagerImpl, acked: Map<number, number>, what: string): Promise<void> {
  const p = m.partition('t', 0)!
  const r = await p.read(0, 1 << 30, { minOneMessage: true, isolationLevel: 'read_uncommitted' })
  const { positions, end } = splitBatches(r.records)
  assert.equal(end, r.records.length, `${what}: only whole batches`)
  for (const pos of positions) assert.ok(isCrcValid(r.records, pos, crc32c), `${what}: CRC at ${pos}`)
  const batches = await readAll(p, 0)
  const byOffset = new Map(batches.flatMap((b) => b.values.map((v, i) => [b.baseOffset + i, v] as const)))
  const latest = new Map<string, number>()
  for (const seq of acked.keys()) latest.set(`k${seq % 5}`, seq)
  for (const [key, seq] of latest)
    assert.equal(byOffset.get(acked.get(seq)!), `v${seq}`, `${what}: the latest record of ${key}`)
}

/** Producer 7: its last batch again is a duplicate; a gap is refused; the next sequence is accepted. */
async function checkProducer(
  m: LogManagerImpl,
  acked: Map<number, number>,
  next: number,
  now: number,
  what: string,
): Promise<void> {
  const p = m.partition('t', 0)!
  const last = next - 1
  const lastOffset = acked.get(last)!
  const end = p.logEndOffset
  const dup = await p.append(producerBatch(last, now), { now })
  assert.deepEqual(
    [dup.errorCode, dup.baseOffset, dup.duplicate],
    [ErrorCode.NONE, lastOffset, true],
    `${what}: the last batch again is a duplicate`,
  )
  assert.equal(p.logEndOffset, end, `${what}: the duplicate wrote nothing`)
  const gap = await p.append(producerBatch(next + 1, now), { now })
  assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, `${what}: a gap is refused`)
  const ok = await p.append(producerBatch(next, now), { now })
  assert.deepEqual(
    [ok.errorCode, ok.baseOffset, ok.duplicate],
    [ErrorCode.NONE, end, false],
    `${what}: next sequence`,
  )
  acked.set(next, ok.baseOffset)
}

for (const point of [
  'before-swap',
  'after-swap',
  'before-snapshot',
  'after-snapshot',
  'before-removal',
  'after-removal',
] as const) {
  test(`kill -9 ${point.replace('-', ' the ')}: the log is whole and the idempotent producer state survives`, {
    timeout: 600_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topograph-cleaner-kill-'))
    const now = Date.now()
    try {
      const acked = await runAndKill(dir, point, now)
      const m = await openLog(dir)
      try {
        assert.deepEqual(
          readdirSync(join(dir, 't-0')).filter(
            (n) => n.endsWith('.cleaned') || n.endsWith('.tmp') || n.endsWith('.deleted'),
          ),
          [],
          'stray files of the interrupted clean are gone',
        )
        await checkLog(m, acked, 'after the restart')
        await checkProducer(m, acked, BATCHES, now, 'after the restart')
        // The cleaner runs again over the recovered log; the state still holds.
        await m.runCleaner(now)
        await checkLog(m, acked, 'after cleaning again')
        await checkProducer(m, acked, BATCHES + 1, now, 'after cleaning again')
      } finally {
        await m.close()
      }
      // And after a clean restart on top.
      const m2 = await openLog(dir)
      try {
        await checkLog(m2, acked, 'after a clean restart')
        await checkProducer(m2, acked, BATCHES + 2, now, 'after a clean restart')
      } finally {
        await m2.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
}
