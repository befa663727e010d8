// Shared pieces of the server benchmarks: the load generator's process (load-worker.ts), the bare
// framing server that is the ceiling, and small helpers for reporting.
import { type ChildProcess, fork, type Serializable } from 'node:child_process'
import { createServer, type Server } from 'node:net'
import { fileURLToPath } from 'node:url'
import { READ_BUFFER_BYTES, readingInto } from '../../src/server/read-buffer.js'
import type { LoadResult, LoadSpec } from './load-worker.js'

export type { LoadResult, LoadSpec } from './load-worker.js'
/** A load's result with the server's CPU time per answered request (µs). */
export type Measured = LoadResult & { readonly cpuUsPerRequest: number }

const WORKER = fileURLToPath(new URL('./load-worker.ts', import.meta.url))

/**
 * Runs one load in a child process (loopback only) and returns what it measured, with the CPU time
 * this process (the server under load) spent per answered request. Unlike requests per second, that
 * figure hardly moves when other work on the machine takes the cores away.
 *
 * The child is kept between loads ({@link startLoadProcesses}): a `fork()` of this process, which
 * runs the servers, makes every page of its memory copy-on-write, and the server then takes a page
 * fault on the first write to each page after every fork, about 20 µs each on the VM of
 * BENCHMARKS.md. A SQLite page cache that grows past a power of two rewrites every cached page's
 * header at once, so a fork before a run cost one commit 7–25 ms of the event loop's CPU
 * ("OffsetCommit: the forks of the load generator"). A server's clients are other processes; it
 * never forks. BENCH_LOAD_FORK=each forks a fresh child for every load, as before.
 */
export function runLoad(spec: LoadSpec): Promise<Measured> {
  if (process.env.BENCH_LOAD_FORK === 'each') return forkLoad<LoadSpec, LoadResult>(WORKER, spec)
  return keptLoad(spec)
}

/** Load processes that ran a load and wait, unreferenced, for the next. */
const idle: ChildProcess[] = []

/**
 * Starts `n` load processes now (the servers of a benchmark should be started after this, so that
 * the only forks happen while this process is small and before anything is measured); `runLoad`
 * starts one when none is idle.
 */
export function startLoadProcesses(n = 1): void {
  if (process.env.BENCH_LOAD_FORK === 'each') return
  for (let i = 0; i < n; i++) idle.push(unreferenced(fork(WORKER, [], loadForkOptions())))
}

function loadForkOptions() {
  return { execArgv: loadExecArgv(), serialization: 'advanced' as const }
}

/** An idle load process must not keep this one alive; it exits when this one does (its channel closes). */
function unreferenced(child: ChildProcess): ChildProcess {
  child.unref()
  child.channel?.unref()
  return child
}

function keptLoad(spec: LoadSpec): Promise<Measured> {
  const child = idle.pop() ?? fork(WORKER, [], loadForkOptions())
  child.ref()
  child.channel?.ref()
  return new Promise((resolve, reject) => {
    const cpu0 = process.cpuUsage()
    const onExit = (code: number | null) => reject(new Error(`load generator exited with ${code}`))
    child.once('exit', onExit)
    child.once('error', reject)
    child.once('message', (m: LoadResult) => {
      const cpu = process.cpuUsage(cpu0)
      child.off('exit', onExit)
      child.off('error', reject)
      idle.push(unreferenced(child))
      resolve({ ...m, cpuUsPerRequest: (cpu.user + cpu.system) / Math.max(1, m.answered) })
    })
    child.send(spec)
  })
}

/**
 * Node options of a forked load process: TypeScript through tsx, and with BENCH_LOAD_PROFILE=<dir>
 * a CPU profile of the process written there when it exits (what the load itself costs).
 */
export function loadExecArgv(): string[] {
  const dir = process.env.BENCH_LOAD_PROFILE
  return dir === undefined || dir === ''
    ? ['--import', 'tsx']
    : ['--import', 'tsx', '--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=250']
}

/**
 * Runs `worker` (a load generator that takes its spec as its first message and answers with its
 * result, which counts the answers it received in `answered`) in a fresh child process, and adds
 * this process's CPU time per answer.
 */
export function forkLoad<S extends Serializable, R extends { readonly answered: number }>(
  worker: string,
  spec: S,
): Promise<R & { readonly cpuUsPerRequest: number }> {
  return new Promise((resolve, reject) => {
    const cpu0 = process.cpuUsage()
    const child = fork(worker, [], loadForkOptions())
    let result: R | undefined
    let cpuUs = 0
    child.once('message', (m: R) => {
      const cpu = process.cpuUsage(cpu0)
      cpuUs = cpu.user + cpu.system
      result = m
      // A load process may wait for another spec (load-worker.ts): this one is done with it.
      if (child.connected) child.disconnect()
    })
    child.once('error', reject)
    child.once('exit', (code) => {
      if (result !== undefined) resolve({ ...result, cpuUsPerRequest: cpuUs / Math.max(1, result.answered) })
      else reject(new Error(`load generator exited with ${code}`))
    })
    child.send(spec)
  })
}

/**
 * A Node TCP server that only frames requests and answers each with the same fixed bytes (a
 * complete size-prefixed response frame), the answers to one read in one write: the most any
 * server on this runtime can answer.
 *
 * It reads every connection into one buffer, as Topograph's listener does (`readingInto`,
 * src/server/read-buffer.ts), and only counts the frames in each read. Reading `'data'` events, it
 * made a fresh ArrayBuffer of each read, about 32 MB a second at the Streams-shaped half rate, and
 * V8 counted those towards collecting the whole heap of the process that also holds the Topograph
 * servers: their full collections then fell into the bare server's own runs, and its latency, the
 * floor of the half-load rows, was theirs (BENCHMARKS.md, "OffsetCommit: the ceiling's floor").
 */
export async function bareServer(answer: Uint8Array): Promise<{ server: Server; port: number }> {
  const out = Buffer.from(answer)
  // Reads are handed over one at a time on the event loop, and nothing of one is kept past it.
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES)
  const server = createServer({ noDelay: true, pauseOnConnect: true }, (accepted) => {
    /** Bytes of the current frame's body still to come, and of its size prefix read so far. */
    let body = 0
    let prefixRead = 0
    let size = 0
    const onRead = (nread: number, bytes: Buffer) => {
      let n = 0
      let i = 0
      while (i < nread) {
        if (body > 0) {
          const k = Math.min(body, nread - i)
          body -= k
          i += k
          if (body === 0) n++
          continue
        }
        size = (size << 8) | bytes[i++]
        if (++prefixRead < 4) continue
        prefixRead = 0
        body = size
        size = 0
        if (body === 0) n++
      }
      if (n === 0) return
      // The answers to one read leave in one write, as Topograph's connection does for responses
      // it has at hand (cork), so the ceiling pays no more syscalls than the server it bounds.
      socket.cork()
      for (let k = 0; k < n; k++) socket.write(out)
      socket.uncork()
    }
    const reading = readingInto(accepted, buffer, onRead)
    const socket = reading ?? accepted
    if (reading === null) socket.on('data', (chunk: Buffer) => onRead(chunk.length, chunk))
    socket.setNoDelay(true)
    socket.on('error', () => undefined)
    // A socket re-created around its handle allows half-open connections: close when the client does.
    socket.on('end', () => socket.destroy())
    socket.resume()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { server, port: (server.address() as { port: number }).port }
}

/** A response frame body (after the size prefix) with its size prefix put back. */
export function withSizePrefix(frame: Uint8Array): Buffer {
  const out = Buffer.alloc(4 + frame.length)
  out.writeInt32BE(frame.length, 0)
  out.set(frame, 4)
  return out
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((r) => server.close(() => r()))
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

export const rps = (r: LoadResult): number => r.requests / r.seconds

export const fmt = (n: number): string => Math.round(n).toLocaleString('en')

/**
 * With BENCH_PROFILE=<dir>, records a V8 CPU profile of this process (the server) while `work`
 * runs and writes it to <dir>/<name>.cpuprofile (open in Chrome DevTools or speedscope). The
 * same profiler as `node --cpu-prof`, limited to the measured phase. BENCH_PROFILE_INTERVAL_US
 * sets the sampling interval (V8's default is 1000 µs; 100 shows single event-loop turns).
 *
 * With BENCH_HEAP_SAMPLE=<dir>, samples what this process allocates while `work` runs, garbage
 * included (the sampling heap profiler keeping the objects scavenges and mark-compacts collected,
 * one sample every BENCH_HEAP_SAMPLE_BYTES, default 4096), and writes <dir>/<name>.heap.json in
 * the soak's format with the answers the load counted (`requests`): `npx tsx
 * tools/soak/heap-sample.ts --file <that file>` gives the bytes per answered request and where
 * they were allocated.
 */
export async function profiled<T>(name: string, work: () => Promise<T>): Promise<T> {
  const heapDir = process.env.BENCH_HEAP_SAMPLE
  if (heapDir) return heapSampled(heapDir, name, () => cpuProfiled(name, work))
  return cpuProfiled(name, work)
}

async function cpuProfiled<T>(name: string, work: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE
  if (!dir) return work()
  const { Session } = await import('node:inspector/promises')
  const { mkdirSync, writeFileSync } = await import('node:fs')
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  const interval = Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 0)
  if (interval > 0) await session.post('Profiler.setSamplingInterval', { interval })
  await session.post('Profiler.start')
  try {
    return await work()
  } finally {
    const { profile } = await session.post('Profiler.stop')
    mkdirSync(dir, { recursive: true })
    writeFileSync(`${dir}/${name.replace(/[^\w.-]+/g, '_')}.cpuprofile`, JSON.stringify(profile))
    session.disconnect()
  }
}

async function heapSampled<T>(dir: string, name: string, work: () => Promise<T>): Promise<T> {
  const { Session } = await import('node:inspector/promises')
  const { mkdirSync, writeFileSync } = await import('node:fs')
  const { PerformanceObserver, constants } = await import('node:perf_hooks')
  let scavenges = 0
  let markCompacts = 0
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) markCompacts++
    }
  })
  gc.observe({ entryTypes: ['gc'] })
  const session = new Session()
  session.connect()
  await session.post('HeapProfiler.enable')
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: Number(process.env.BENCH_HEAP_SAMPLE_BYTES ?? 4096),
    includeObjectsCollectedByMinorGC: true,
    includeObjectsCollectedByMajorGC: true,
  })
  const startedAt = Date.now()
  let result: T | undefined
  try {
    result = await work()
    return result
  } finally {
    const { profile } = await session.post('HeapProfiler.stopSampling')
    const stoppedAt = Date.now()
    gc.disconnect()
    session.disconnect()
    const answered = (result as { answered?: unknown } | undefined)?.answered
    mkdirSync(dir, { recursive: true })
    writeFileSync(
      `${dir}/${name.replace(/[^\w.-]+/g, '_')}.heap.json`,
      JSON.stringify({
        startedAt,
        stoppedAt,
        scavenges,
        markCompacts,
        ...(typeof answered === 'number' ? { requests: answered } : {}),
        profile,
      }),
    )
  }
}
