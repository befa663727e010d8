// What the machine gives both of the soak's processes, apart from their own work: probes of what the
// compute-bound speed probe (`speedProbeUs`) does not feel. A walk over a buffer larger than the
// caches (memory latency and the caches shared with the host's other guests), a clock read (the
// cost of `process.hrtime`), a write and read round trip on the loopback (the kernel's path every
// heartbeat takes twice), the machine's CPU time (the host's steal as the guest counts it, softirq,
// and all of it, for what runs beside the soak's processes), the file pages read back after
// reclaim, and the context switches of a process's threads. The soak runs them on the load's main
// thread every few seconds and puts their medians beside each minute's CPU per heartbeat
// (RELIABILITY.md, "Soak").
import { readdirSync, readFileSync } from 'node:fs'
import { createServer, type Server, type Socket, connect } from 'node:net'

/** 64 MB of 32-bit indices: larger than this machine's last-level cache as a guest sees it. */
const WALK_ENTRIES = 16 * 1024 * 1024

let walk: Int32Array | undefined
let walkAt = 0

/**
 * One random cycle through every entry (Sattolo's shuffle, a fixed seed): each read depends on the
 * one before, so the walk takes a memory latency per step that no prefetcher hides.
 */
function walkBuffer(entries: number): Int32Array {
  const a = new Int32Array(entries)
  for (let i = 0; i < entries; i++) a[i] = i
  let seed = 0x9e3779b9 | 0
  for (let i = entries - 1; i > 0; i--) {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    const j = (seed >>> 0) % i
    const t = a[i]
    a[i] = a[j]
    a[j] = t
  }
  return a
}

/**
 * ns per step of a dependent walk over `entries` 32-bit slots (64 MB by default; the buffer is
 * built once, on the first call, and the walk goes on where the last call left it). Taken a few
 * times in a row, the fastest is the memory latency of the moment.
 */
export function memoryProbeNs(steps = 20_000, entries = WALK_ENTRIES): number {
  if (walk === undefined || walk.length !== entries) {
    walk = walkBuffer(entries)
    walkAt = 0
  }
  const a = walk
  let i = walkAt
  const from = performance.now()
  for (let k = 0; k < steps; k++) i = a[i]
  const ns = (1e6 * (performance.now() - from)) / steps
  walkAt = i
  return ns
}

/** ns per `process.hrtime.bigint()` call: the clock read through the vDSO, or a system call where the clock source has none. */
export function clockProbeNs(calls = 5_000): number {
  let last = 0n
  const from = performance.now()
  for (let k = 0; k < calls; k++) last = process.hrtime.bigint()
  const ns = (1e6 * (performance.now() - from)) / calls
  return last > 0n ? ns : Number.NaN
}

/**
 * ns per `process.getuid()`: a system call that does no work (glibc does not cache it), so its time is
 * the kernel's entry and exit as this guest pays them (page-table isolation, the host's exits).
 */
export function syscallProbeNs(calls = 2_000): number {
  let uid = 0
  const from = performance.now()
  for (let k = 0; k < calls; k++) uid += process.getuid?.() ?? 0
  const ns = (1e6 * (performance.now() - from)) / calls
  return uid >= 0 ? ns : Number.NaN
}

/**
 * A loopback TCP connection to an echo server in the same process: `roundTripUs()` writes 64 bytes
 * and resolves when they are back, so one round trip is two writes, two reads and the loop's polls
 * for them, on the kernel's loopback path. The fastest of a few is the path's cost; the others add
 * this thread's own loop.
 */
export class LoopbackProbe {
  readonly #server: Server
  readonly #client: Socket
  readonly #payload = Buffer.alloc(64, 7)
  #waiting: { from: number; got: number; resolve: (us: number) => void } | undefined

  private constructor(server: Server, client: Socket) {
    this.#server = server
    this.#client = client
    client.on('data', (chunk: Buffer) => {
      const w = this.#waiting
      if (w === undefined) return
      w.got += chunk.length
      if (w.got < this.#payload.length) return
      this.#waiting = undefined
      w.resolve(1000 * (performance.now() - w.from))
    })
  }

  static async open(): Promise<LoopbackProbe> {
    const server = createServer({ noDelay: true }, (s) => {
      s.setNoDelay(true)
      s.on('data', (chunk) => s.write(chunk))
      s.on('error', () => {})
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => resolve())
    })
    const { port } = server.address() as { port: number }
    const client = await new Promise<Socket>((resolve, reject) => {
      const c = connect({ host: '127.0.0.1', port, noDelay: true }, () => resolve(c))
      c.once('error', reject)
    })
    server.unref()
    client.unref()
    return new LoopbackProbe(server, client)
  }

  roundTripUs(): Promise<number> {
    if (this.#waiting !== undefined) return Promise.reject(new Error('a round trip is already under way'))
    return new Promise((resolve) => {
      this.#waiting = { from: performance.now(), got: 0, resolve }
      this.#client.write(this.#payload)
    })
  }

  close(): void {
    this.#client.destroy()
    this.#server.close()
  }
}

/**
 * The machine's CPU time so far by kind, in ticks (the `cpu` line of /proc/stat: user, nice, system,
 * idle, iowait, irq, softirq, steal, ...): `busy`, every CPU's time running anything (user, nice,
 * system, irq and softirq; guest time is in user already), `softirq` apart, and the host's `steal`;
 * undefined without a line that has them.
 */
export function parseCpuTicks(
  procStat: string,
): { busy: number; softirq: number; steal: number } | undefined {
  const line = procStat.split('\n').find((l) => l.startsWith('cpu '))
  if (line === undefined) return undefined
  const n = line.trim().split(/\s+/).slice(1, 9).map(Number)
  if (n.length < 8 || !n.every(Number.isFinite)) return undefined
  const [user, nice, system, , , irq, softirq, steal] = n
  return { busy: user + nice + system + irq + softirq, softirq, steal }
}

/** Ticks of /proc/stat in ms: Linux counts them in USER_HZ, 100 a second on every architecture it exports. */
export const TICK_MS = 10

/**
 * The machine's CPU time so far in ms (`parseCpuTicks`): busy, softirq, and the host's steal as this
 * guest counts it (0 on a guest that does not); undefined without /proc/stat.
 */
export function machineCpuMs(): { busyMs: number; softirqMs: number; stealMs: number } | undefined {
  try {
    const t = parseCpuTicks(readFileSync('/proc/stat', 'utf8'))
    return t === undefined
      ? undefined
      : { busyMs: t.busy * TICK_MS, softirqMs: t.softirq * TICK_MS, stealMs: t.steal * TICK_MS }
  } catch {
    return undefined
  }
}

/**
 * The file pages read back in after the kernel dropped them (`workingset_refault_file` of
 * /proc/vmstat: page cache reclaimed, here by the guest's proactive reclaim, and faulted in again);
 * undefined without the counter.
 */
export function parseFileRefaults(vmstat: string): number | undefined {
  const m = /^workingset_refault_file (\d+)$/m.exec(vmstat)
  return m === null ? undefined : Number(m[1])
}

/** `parseFileRefaults` of this machine so far; undefined without /proc/vmstat. */
export function fileRefaults(): number | undefined {
  try {
    return parseFileRefaults(readFileSync('/proc/vmstat', 'utf8'))
  } catch {
    return undefined
  }
}

export interface ContextSwitches {
  voluntary: number
  nonvoluntary: number
}

/** The voluntary (the thread waited: I/O, a lock, its loop) and nonvoluntary (taken off its core) context switches in a /proc status file. */
export function parseContextSwitches(status: string): ContextSwitches | undefined {
  const v = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)
  const n = /^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)
  return v === null || n === null ? undefined : { voluntary: Number(v[1]), nonvoluntary: Number(n[1]) }
}

/**
 * A process's context switches so far, added up over its threads (/proc/<pid>/task/<tid>/status;
 * the process's own status file counts its main thread's alone); undefined once it is gone.
 */
export function processContextSwitches(pid: number): ContextSwitches | undefined {
  let tids: string[]
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return undefined
  }
  const total = { voluntary: 0, nonvoluntary: 0 }
  for (const tid of tids) {
    let status: string
    try {
      status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
    } catch {
      continue // a thread that ended since the listing
    }
    const c = parseContextSwitches(status)
    if (c === undefined) continue
    total.voluntary += c.voluntary
    total.nonvoluntary += c.nonvoluntary
  }
  return total
}

/**
 * A process's context switches by interval: `take()` gives those since the previous call. Threads
 * that ended in between take their counts with them, so an interval can read low, never negative.
 */
export class SwitchCounter {
  #pid: number
  #at: ContextSwitches

  constructor(pid: number) {
    this.#pid = pid
    this.#at = processContextSwitches(pid) ?? { voluntary: 0, nonvoluntary: 0 }
  }

  /** Counts from here on for another process (a restarted server): its counts since it started join the next interval. */
  follow(pid: number): void {
    if (pid === this.#pid) return
    this.#pid = pid
    this.#at = { voluntary: 0, nonvoluntary: 0 }
  }

  take(): ContextSwitches {
    const now = processContextSwitches(this.#pid)
    if (now === undefined) return { voluntary: Number.NaN, nonvoluntary: Number.NaN }
    const d = {
      voluntary: Math.max(0, now.voluntary - this.#at.voluntary),
      nonvoluntary: Math.max(0, now.nonvoluntary - this.#at.nonvoluntary),
    }
    this.#at = now
    return d
  }
}
