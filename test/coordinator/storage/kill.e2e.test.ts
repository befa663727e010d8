// kill -9 right after acknowledged appends: a reopened store holds every acknowledged batch, whole,
// and no batch is ever half there.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { SqliteRecordStore } from '../../../src/coordinator/storage/sqlite.js'
import { show } from './contract.js'

const child = fileURLToPath(new URL('./fixtures/append-child.ts', import.meta.url))

async function runAndKill(
  dir: string,
  synchronous: string,
  tag: string,
  killAfterAcks: number,
  walCheckpointBytes: number | undefined,
): Promise<number> {
  const args = [
    child,
    dir,
    synchronous,
    tag,
    ...(walCheckpointBytes === undefined ? [] : [String(walCheckpointBytes)]),
  ]
  const proc = spawn(process.execPath, ['--import', 'tsx', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  proc.stderr.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    proc.on('exit', (_code, signal) => resolve(signal)),
  )
  let lastAck = -1
  // Only bounds a hang: on a loaded machine a child's start-up and 300 fsynced commits (synchronous
  // full) have taken more than 30 s.
  let hung = false
  const timeout = setTimeout(() => {
    hung = true
    proc.kill('SIGKILL')
  }, 180_000)
  for await (const line of createInterface({ input: proc.stdout })) {
    const m = /^ack (\d+)$/.exec(line)
    if (m === null) continue
    const n = Number(m[1])
    assert.equal(n, lastAck + 1, 'acks arrive in order')
    lastAck = n
    if (n + 1 >= killAfterAcks) {
      // Killed while it keeps appending: some batches after lastAck may be committed, unprinted.
      proc.kill('SIGKILL')
      break
    }
  }
  clearTimeout(timeout)
  const signal = await exited
  assert.equal(signal, 'SIGKILL', `child did not die by SIGKILL (stderr: ${stderr})`)
  assert.ok(!hung, `no ${killAfterAcks} acknowledgements within 180 s (last ${lastAck}, stderr: ${stderr})`)
  return lastAck
}

// The third run checkpoints every 64 KiB of WAL, so the kill lands among checkpoints in the worker
// thread and writes held for them.
for (const [synchronous, walCheckpointBytes] of [
  ['normal', undefined],
  ['full', undefined],
  ['normal', 64 * 1024],
] as const) {
  const checkpoints = walCheckpointBytes === undefined ? '' : `, checkpoint every ${walCheckpointBytes} bytes`
  test(`sqlite (synchronous=${synchronous}${checkpoints}): every acknowledged batch survives kill -9, no batch is torn`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'topograph-kill-'))
    try {
      const acknowledged: string[] = [] // `${tag}/b${n}@${shard}` of every acknowledged batch so far
      // Two rounds: the second child opens the file the first one left behind when it was killed.
      for (const tag of ['first', 'second']) {
        const last = await runAndKill(dir, synchronous, tag, 300, walCheckpointBytes)
        assert.ok(last >= 299, `child acknowledged ${last + 1} batches`)
        for (let n = 0; n <= last; n++) acknowledged.push(`${tag}/b${n}@${n % 5}`)

        const store = new SqliteRecordStore(dir)
        await store.open()
        const found = new Set<string>()
        for (let shard = 0; shard < 5; shard++) {
          const loaded = show(await store.load(shard))
          assert.equal(loaded.length % 3, 0, `shard ${shard}: only whole batches`)
          for (let i = 0; i < loaded.length; i += 3) {
            const m = /^(\w+)\/b(\d+)\/r0$/.exec(loaded[i][0])
            assert.ok(m !== null, `unexpected key ${loaded[i][0]}`)
            const [, t, n] = m
            assert.deepEqual(loaded.slice(i, i + 3), [
              [`${t}/b${n}/r0`, `${t}/v${n}`],
              [`${t}/b${n}/r1`, `${t}/v${n}`],
              [`${t}/b${n}/r2`, `${t}/v${n}`],
            ])
            found.add(`${t}/b${n}@${shard}`)
          }
        }
        await store.close()
        for (const batch of acknowledged) {
          assert.ok(found.has(batch), `acknowledged batch ${batch} is missing after kill -9`)
        }
        // Batches committed after the last ack the parent read may be there too, but without holes:
        // the batches of this round on disk are exactly 0..k for some k.
        const ofRound = [...found].filter((b) => b.startsWith(`${tag}/`)).length
        for (let n = 0; n < ofRound; n++) {
          assert.ok(
            found.has(`${tag}/b${n}@${n % 5}`),
            `batch ${tag}/b${n} is missing while later ones exist`,
          )
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
}
