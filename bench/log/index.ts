/**
 * The log's hot paths: append (validation + write) and read, per engine, with batches as a
 * producer sends them; and how long the cleaner holds the event loop while it compacts. Not part
 * of the test gate.
 *
 * Run: npx tsx bench/log/index.ts            (BENCH_TIME_MS=1000 for longer samples)
 * Prints a Markdown table: ops/s, MB/s, and the cleaner's longest slice.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Bench } from 'tinybench'
import { CompressionCodec } from '../../src/log/batch.js'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { FileLogStorage } from '../../src/log/file.js'
import { createLogManager, type LogManagerImpl } from '../../src/log/manager.js'
import { MemoryLogStorage } from '../../src/log/memory.js'
import type { LogConfig } from '../../src/log/types.js'
import { batchOf } from '../../test/log/helpers.js'

const time = Number(process.env.BENCH_TIME_MS ?? 500)
const dir = mkdtempSync(join(tmpdir(), 'topograph-bench-log-'))
const value = 'x'.repeat(150)
const batch = (codec: number): Uint8Array =>
  batchOf(
    Array.from({ length: 100 }, (_, i) => ({ key: `key-${i}`, value, timestamp: Date.now() })),
    { codec },
  )

async function open(engine: 'memory' | 'file', configs: Partial<LogConfig> = {}): Promise<LogManagerImpl> {
  const storage =
    engine === 'memory'
      ? new MemoryLogStorage()
      : new FileLogStorage([join(dir, `${engine}-${Math.random()}`)])
  const m = createLogManager(
    {
      ...DEFAULT_LOG_MANAGER_CONFIG,
      logDirs: [dir],
      defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, configs),
    },
    { storage, noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('t', 'id', 0, 1)
  return m
}

const rows: string[] = ['| case | ops/s | MB/s |', '|---|---|---|']
try {
  for (const engine of ['memory', 'file'] as const) {
    for (const [name, codec, configs] of [
      ['uncompressed', CompressionCodec.none, {}],
      ['lz4 kept', CompressionCodec.lz4, {}],
      ['lz4 → zstd', CompressionCodec.lz4, { compressionType: 'zstd' }],
    ] as const) {
      const m = await open(engine, configs as Partial<LogConfig>)
      const p = m.partition('t', 0)!
      const b = batch(codec)
      const bench = new Bench({ time })
      bench.add('append', async () => {
        await p.append(b, { now: Date.now() })
      })
      await bench.run()
      const t = bench.tasks[0].result as { throughput?: { mean: number }; hz?: number }
      const hz = t.throughput?.mean ?? t.hz ?? 0
      rows.push(
        `| ${engine}: append 100 × 150 B, ${name} (${b.byteLength} B) | ${hz.toFixed(0)} | ${((hz * b.byteLength) / 1e6).toFixed(1)} |`,
      )
      const readBench = new Bench({ time })
      const end = p.logEndOffset
      let offset = 0
      let bytes = 0
      let reads = 0
      readBench.add('read', async () => {
        const r = await p.read(offset, 1 << 20, { minOneMessage: true, isolationLevel: 'read_uncommitted' })
        offset = (offset + 50_000) % Math.max(1, end - 100)
        if (r.records.byteLength === 0) throw new Error('empty read')
        bytes += r.records.byteLength
        reads++
      })
      await readBench.run()
      const rt = readBench.tasks[0].result as { throughput?: { mean: number }; hz?: number }
      const rhz = rt.throughput?.mean ?? rt.hz ?? 0
      const perRead = bytes / Math.max(1, reads)
      rows.push(
        `| ${engine}: read up to 1 MiB (${(perRead / 1024).toFixed(0)} KiB), ${name} | ${rhz.toFixed(0)} | ${((rhz * perRead) / 1e6).toFixed(0)} |`,
      )
      await m.close()
    }
  }
  // The cleaner: 50 MB of keyed data over 500 keys; the longest time it held the event loop.
  const m = await open('file', {
    cleanupPolicy: ['compact'],
    segmentBytes: 8 * 1024 * 1024,
    minCleanableDirtyRatio: 0.01,
  })
  const p = m.partition('t', 0)!
  const keyed = batchOf(
    Array.from({ length: 100 }, (_, i) => ({ key: `key-${i % 500}`, value, timestamp: Date.now() })),
  )
  for (let i = 0; i < 3000; i++) await p.append(keyed, { now: Date.now() })
  let longestGap = 0
  let last = performance.now()
  const ticker = setInterval(() => {
    const now = performance.now()
    longestGap = Math.max(longestGap, now - last)
    last = now
  }, 1)
  const started = performance.now()
  const cpuStart = process.cpuUsage()
  await m.runCleaner(Date.now())
  const cpu = process.cpuUsage(cpuStart)
  clearInterval(ticker)
  const stats = m.cleaner!.lastStats.at(-1)
  rows.push(
    `| cleaner: ${stats?.bytesBefore ?? 0} → ${stats?.bytesAfter ?? 0} B in ${(performance.now() - started).toFixed(0)} ms (${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU) | longest slice ${stats?.longestSliceMs.toFixed(1)} ms | longest 1 ms-timer gap ${longestGap.toFixed(1)} ms |`,
  )
  await m.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log(rows.join('\n'))
