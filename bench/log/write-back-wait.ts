/**
 * Where a segment append waits while the segment is written back. The main thread appends 16.7-KB
 * batches with positional `writeSync`s at `MB/s` into a file made longer ahead of its data with
 * `ftruncate` (as the file engine's read ahead makes it; the pages are not read ahead here), and every 4 MiB (`WRITE_BACK_BYTES`) starts an fsync of it on
 * libuv's threadpool, at most one in flight, as the engine's write-back does (`fsync`), or never
 * (`none`: the kernel's flusher writes the pages back when it will). Optionally a child process
 * loads the same disk meanwhile (`dd`: 1.5-GB files written through the page cache, each followed
 * by `sync`, over and over), which makes the file system's own reads slow, as another tenant of the
 * disk would.
 *
 * With `ahead=zeros` the file's blocks are allocated ahead of the appends instead, as a
 * `posix_fallocate` without the system call does it: 4 MiB of zeros at a time, from at least 1 MiB
 * past the data, written and fdatasynced on the threadpool, one region in flight; an append that
 * would reach a region still in flight waits for it (the probe counts those waits), so no zero
 * lands on data.
 *
 * A worker thread samples the main thread's state every 0.5 ms (`/proc/self/task/<tid>/stat`) and,
 * while it is blocked (D), the kernel stacks of every blocked thread of the process
 * (`/proc/self/task/<tid>/stack`, root only): the stacks are counted by their top frames and printed
 * with the run's appends over 5 ms (and how many of them had a write-back in flight).
 *
 *   node --import tsx bench/log/write-back-wait.ts [seconds=15] [MB/s=60] [write-back=fsync|none] [load=dd|none] [dir=tmpdir] [ahead=hole|zeros]
 *
 * Not part of the test gate; Linux only.
 */
import { spawn } from 'node:child_process'
import * as fs from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'

const BATCH = 16_717
const WRITE_BACK = 4 * 1024 * 1024
const AHEAD = 4 * 1024 * 1024
/** `zeros`: the region written with zeros and fdatasynced ahead of the appends, this much at a time. */
const ZERO_AHEAD = 4 * 1024 * 1024

interface Sampler {
  readonly pid: number
  readonly tid: number
  readonly until: number
}

/**
 * The sampler thread, as plain JavaScript (a worker's entry is not run through the TypeScript
 * loader on Node 20). Posts the blocked threads' stacks (top frames, innermost first) by count.
 */
const SAMPLER = `
const fs = require('node:fs')
const { parentPort, workerData } = require('node:worker_threads')
const { pid, tid, until } = workerData
const state = (t) => {
  try {
    const s = fs.readFileSync('/proc/' + pid + '/task/' + t + '/stat', 'utf8')
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[0]
  } catch {
    return null
  }
}
const frames = (text) =>
  text.trim().split('\\n').slice(0, 7).map((l) => (l.split(' ')[1] || l).split('+')[0]).join(' < ')
const seen = new Map()
const pause = new Int32Array(new SharedArrayBuffer(4))
let readable = true
while (Date.now() < until) {
  if (readable && state(tid) === 'D') {
    const blocked = []
    for (const t of fs.readdirSync('/proc/' + pid + '/task')) {
      if (state(t) !== 'D') continue
      try {
        const stack = frames(fs.readFileSync('/proc/' + pid + '/task/' + t + '/stack', 'utf8'))
        blocked.push((Number(t) === tid ? 'main: ' : 'other: ') + stack)
      } catch {
        readable = false
      }
    }
    const key = blocked.sort().join('\\n    ')
    seen.set(key, (seen.get(key) || 0) + 1)
  }
  Atomics.wait(pause, 0, 0, 0.5)
}
parentPort.postMessage([...seen].sort((a, b) => b[1] - a[1]).slice(0, 8))
`

/**
 * Kills the load's process group and waits until none of it is left: a `dd` or `sync` blocked in
 * the kernel dies only once its call returns, and one left running would load the next run.
 */
async function stopGroup(pgid: number): Promise<void> {
  const left = (): boolean => {
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue
      try {
        const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
        // Fields after the command's closing parenthesis: state, ppid, pgrp.
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid) return true
      } catch {
        // gone meanwhile
      }
    }
    return false
  }
  while (left()) {
    try {
      process.kill(-pgid, 'SIGKILL')
    } catch {
      // none left to signal
    }
    await new Promise((r) => setTimeout(r, 100))
  }
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 15)
  const mbps = Number(process.argv[3] ?? 60)
  const writeBack = process.argv[4] ?? 'fsync'
  const loadKind = process.argv[5] ?? 'none'
  const dir = fs.mkdtempSync(join(process.argv[6] ?? tmpdir(), 'topograph-write-back-wait-'))
  const ahead = process.argv[7] ?? 'hole'
  const zeros = Buffer.alloc(ZERO_AHEAD)
  const path = join(dir, '00000000000000000000.log')
  const fd = fs.openSync(path, 'w+')
  const batch = Buffer.alloc(BATCH, 0x5a)
  let load: ReturnType<typeof spawn> | undefined
  if (loadKind === 'dd') {
    const script = `while :; do dd if=/dev/zero of='${dir}/load' bs=1M count=1500 2>/dev/null; sync; done`
    load = spawn('sh', ['-c', script], { stdio: 'ignore', detached: true })
  }
  const until = Date.now() + seconds * 1000 + 500
  const sampler = new Worker(SAMPLER, {
    eval: true,
    workerData: { pid: process.pid, tid: process.pid, until } satisfies Sampler,
  })
  const stacks = new Promise<[string, number][]>((resolve) => sampler.once('message', resolve))
  const writes: number[] = []
  let slow = 0
  let slowDuringWriteBack = 0
  let pos = 0
  let length = 0
  let writtenBackAt = 0
  let busy = false
  let writeBacks = 0
  let zeroEnd = 0
  let zeroFrom = -1
  let zeroRuns = 0
  let zeroMs = 0
  let longestZero = 0
  let overruns = 0
  let overranAt = -1
  let overrunMs = 0
  let longestOverrun = 0
  let writeBackMs = 0
  let longestWriteBack = 0
  const start = performance.now()
  const perMs = (mbps * 1e6) / 1000
  let sent = 0
  await new Promise<void>((resolve) => {
    const turn = (): void => {
      const now = performance.now()
      if (now - start > seconds * 1000) {
        resolve()
        return
      }
      while (sent < ((now - start) * perMs) / BATCH) {
        if (ahead === 'zeros') {
          if (zeroFrom >= 0 && pos + BATCH > zeroFrom) {
            // The appends reached a region whose zeros are not written yet: counted, and the
            // appends wait for it (as an engine would have to), so no zero lands on data.
            if (overranAt < 0) {
              overranAt = performance.now()
              overruns++
            }
            break
          }
          if (zeroFrom < 0 && zeroEnd < pos + 2 * ZERO_AHEAD) {
            const from = Math.max(zeroEnd, pos + 1024 * 1024)
            zeroFrom = from
            const began = performance.now()
            fs.write(fd, zeros, 0, ZERO_AHEAD, from, (err) => {
              if (err) throw err
              fs.fdatasync(fd, (err2) => {
                if (err2) throw err2
                const d = performance.now() - began
                zeroRuns++
                zeroMs += d
                longestZero = Math.max(longestZero, d)
                zeroEnd = from + ZERO_AHEAD
                zeroFrom = -1
                if (overranAt >= 0) {
                  const waited = performance.now() - overranAt
                  overrunMs += waited
                  longestOverrun = Math.max(longestOverrun, waited)
                  overranAt = -1
                }
              })
            })
          }
        } else if (pos + BATCH > length - AHEAD + 1024 * 1024) {
          length = pos + AHEAD
          fs.ftruncateSync(fd, length)
        }
        const t = performance.now()
        fs.writeSync(fd, batch, 0, BATCH, pos)
        const took = performance.now() - t
        writes.push(took)
        if (took > 5) {
          slow++
          if (busy) slowDuringWriteBack++
        }
        pos += BATCH
        sent++
        if (writeBack === 'fsync' && !busy && pos - writtenBackAt >= WRITE_BACK) {
          busy = true
          writtenBackAt = pos
          const began = performance.now()
          fs.fsync(fd, (err) => {
            if (err) throw err
            busy = false
            const d = performance.now() - began
            writeBacks++
            writeBackMs += d
            longestWriteBack = Math.max(longestWriteBack, d)
          })
        }
      }
      setImmediate(turn)
    }
    turn()
  })
  if (load?.pid !== undefined) await stopGroup(load.pid)
  const seen = await stacks
  fs.closeSync(fd)
  fs.rmSync(dir, { recursive: true, force: true })
  writes.sort((a, b) => a - b)
  const q = (p: number) => writes[Math.min(writes.length - 1, Math.floor(p * writes.length))].toFixed(3)
  console.log(
    `write-back ${writeBack}, load ${loadKind}, ${mbps} MB/s for ${seconds} s: ${writes.length} appends, ` +
      `p50 ${q(0.5)} / p99 ${q(0.99)} / p99.9 ${q(0.999)} / max ${writes[writes.length - 1].toFixed(1)} ms; ` +
      `${slow} over 5 ms (${slowDuringWriteBack} with a write-back in flight); ` +
      `${writeBacks} write-backs, ${(writeBackMs / Math.max(1, writeBacks)).toFixed(1)} ms on average, longest ${longestWriteBack.toFixed(0)} ms`,
  )
  if (ahead === 'zeros')
    console.log(
      `zeros ahead: ${zeroRuns} runs, ${(zeroMs / Math.max(1, zeroRuns)).toFixed(1)} ms on average, longest ${longestZero.toFixed(0)} ms; the appends reached a region in flight ${overruns} times and waited for it ${overrunMs.toFixed(0)} ms in all, at most ${longestOverrun.toFixed(0)} ms`,
    )
  console.log("samples of the main thread blocked, by the blocked threads' kernel stacks:")
  for (const [key, n] of seen) console.log(`  ${n} × ${key}`)
}

await main()
