/**
 * What retention's deletion of large segments costs the event loop, against its peer: the same
 * deletion made with synchronous calls in one turn (a close and an unlink of a file of the same
 * size, written and fsynced alike), in the same run and directory, alternated in rounds.
 *
 * Each round fills a partition of the file engine with `segments` + 1 segments of `segment-MiB`
 * (16.7-KB batches, then a flush: written to disk, as old segments are), lets retention delete all
 * but the active one, and reports the event loop's longest turn while it did (a 1-ms timer's
 * largest lateness, from the retention call until the files are gone) and how long until the
 * storage had closed and removed every file. The peer writes `segments` files of the same size,
 * fsyncs them, and closes and unlinks them in one turn.
 *
 *   node --import tsx bench/log/segment-delete.ts [segment-MiB=256] [segments=2] [rounds=3] [dir=tmpdir]
 *
 * Not part of the test gate. The freeing's cost is the file system's: run it on the log's (/work
 * here: ext4 mounted with `discard`, whose discards are issued and waited for in the call).
 */
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG } from '../../src/log/config.js'
import { FileLogStorage } from '../../src/log/file.js'
import { createLogManager } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import { batchOf } from '../../test/log/helpers.js'

const segmentMiB = Number(process.argv[2] ?? 256)
const segments = Number(process.argv[3] ?? 2)
const rounds = Number(process.argv[4] ?? 3)
const root = mkdtempSync(join(process.argv[5] ?? tmpdir(), 'topograph-segment-delete-'))
const segmentBytes = segmentMiB * 1024 * 1024
const OLD = Date.now() - 3_600_000
const batch = batchOf(
  Array.from({ length: 16 }, (_, k) => ({ key: `k${k}`, value: 'v'.repeat(1024), timestamp: OLD })),
  { timestamp: OLD },
)

/** The event loop's longest lateness of a 1-ms timer while `work` runs. */
async function longestTurn(work: () => Promise<void>): Promise<{ turnMs: number; tookMs: number }> {
  let last = performance.now()
  let worst = 0
  const timer = setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last - 1)
    last = now
  }, 1)
  const start = performance.now()
  // The turn the work starts in counts too: it is measured from the timer's last firing.
  await new Promise((r) => setTimeout(r, 5))
  last = performance.now()
  await work()
  const tookMs = performance.now() - start - 5
  await new Promise((r) => setTimeout(r, 5))
  clearInterval(timer)
  return { turnMs: worst, tookMs }
}

async function topograph(round: number): Promise<{ turnMs: number; tookMs: number }> {
  const dir = join(root, `topograph-${round}`)
  const storage = new FileLogStorage([dir])
  const m = createLogManager(
    { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [dir], defaults: DEFAULT_LOG_CONFIG },
    { storage, noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('t', 'id', 0, 1, { segmentBytes, retentionMs: 60_000 })
  const p = m.partition('t', 0)! as PartitionLogImpl
  while (p.store.segments().length <= segments) await p.append(batch, { now: Date.now() })
  // A record of now in the active segment: retention leaves it.
  await p.append(batchOf([{ key: 'k', value: 'v', timestamp: Date.now() }]), { now: Date.now() })
  await p.flush()
  const r = await longestTurn(async () => {
    const deleted = await p.applyRetention(Date.now())
    if (deleted !== segments) throw new Error(`retention deleted ${deleted} segments, not ${segments}`)
    await storage.discarded()
  })
  await m.close()
  rmSync(dir, { recursive: true, force: true })
  return r
}

async function peer(round: number): Promise<{ turnMs: number; tookMs: number }> {
  const chunk = Buffer.alloc(1024 * 1024, 0x5a)
  const files: { fd: number; path: string }[] = []
  for (let i = 0; i < segments; i++) {
    const path = join(root, `peer-${round}-${i}.log`)
    const fd = openSync(path, 'w')
    for (let pos = 0; pos < segmentBytes; pos += chunk.byteLength)
      writeSync(fd, chunk, 0, chunk.byteLength, pos)
    fsyncSync(fd)
    files.push({ fd, path })
  }
  return longestTurn(async () => {
    for (const f of files) {
      closeSync(f.fd)
      unlinkSync(f.path)
    }
  })
}

const rows: string[] = []
try {
  for (let round = 1; round <= rounds; round++) {
    const t = await topograph(round)
    const q = await peer(round)
    rows.push(
      `| ${round} | ${t.turnMs.toFixed(1)} | ${t.tookMs.toFixed(0)} | ${q.turnMs.toFixed(1)} | ${(t.turnMs / q.turnMs).toFixed(3)} |`,
    )
  }
} finally {
  rmSync(root, { recursive: true, force: true })
}
console.log(`${segments} segments of ${segmentMiB} MiB deleted, ${rounds} rounds\n`)
console.log(
  '| round | Topograph: longest turn ms | Topograph: files gone after ms | peer (close + unlink in one turn): longest turn ms | ratio |',
)
console.log('| ---: | ---: | ---: | ---: | ---: |')
for (const r of rows) console.log(r)
