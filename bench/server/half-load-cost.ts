// What a request costs at requests.ts's half load, in counts the machine's load changes little: one
// OffsetCommit shape against one Topograph server, closed loop first (as requests.ts measures the
// rate it halves: 1 s warm-up, then `seconds`), then open loop at half that rate, and the same open
// loop against the bare framing server answering the same bytes (what the load generator and the
// kernel alone give: the floor of the latency this load can show). For each open-loop run:
//
// - the server's CPU per answered request (every thread, and the main thread alone from its
//   schedstat, with its time waiting for a CPU), and the load generator's own CPU per request;
// - the event loop's turns (the main thread's `epoll_wait` calls) and socket reads (`receive` calls
//   of the server's connections): requests per turn and per read;
// - the store's writes: transactions (appends and group commits), records and commits per write;
// - the system calls of the server's threads (`perf stat --per-thread` on this process; main thread
//   and the others apart): epoll_wait, read, writev/write, fcntl, pwrite64, pread64, fsync, futex;
// - collections by kind, and p50 / p99 / p99.9 of the latency.
//
//   node --import tsx bench/server/half-load-cost.ts [sqlite|memory] [one|16|streams] [seconds=3] [runs=1]
//
// TOPOGRAPH_BENCH_BUILD=dist measures the compiled server (target.ts). BENCH_PROFILE=<dir> records a
// CPU profile of the server during each Topograph open-loop run (load.ts, `profiled`). Without perf
// (or without the rights to attach it) the system-call columns are left out.
import { spawn } from 'node:child_process'
import { loadavg } from 'node:os'
import { requestFrame } from '../../test/server/wire-client.js'
import { offsetCommitBody, startBenchServer, streamsCommitBody } from './commit-server.js'
import { describeGcs, observeGc, type TraceEvent } from './gc-events.js'
import {
  bareServer,
  closeServer,
  fmt,
  type Measured,
  profiled,
  rps,
  runLoad,
  withSizePrefix,
} from './load.js'
import { serverBuild, serverModule } from './target.js'
import { mainThreadStat } from './thread-stat.js'

const storage = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'memory'
const shape = process.argv[3] ?? 'streams'
const seconds = Number(process.argv[4] ?? 3)
const runs = Number(process.argv[5] ?? 1)
if (
  (storage !== 'sqlite' && storage !== 'memory') ||
  !['one', '16', 'streams'].includes(shape) ||
  !(seconds > 0)
) {
  console.error('usage: half-load-cost.ts [sqlite|memory] [one|16|streams] [seconds] [runs]')
  process.exit(2)
}

const frames =
  shape === 'streams'
    ? [requestFrame(8, 9, 1, streamsCommitBody)]
    : shape === '16'
      ? Array.from({ length: 16 }, (_, g) =>
          requestFrame(8, 9, 1, { ...offsetCommitBody, groupId: `bench-commit-${g}` }),
        )
      : [requestFrame(8, 9, 1, offsetCommitBody)]
const spec = { frames, seconds, warmupSeconds: 1, connections: 4, depth: 16 }

// Socket reads: every chunk a connection of the server is handed.
const { Connection } = (await serverModule('connection.js')) as {
  Connection: { prototype: { receive: (chunk: Buffer) => void } }
}
/** What the server did in the current run, counted from here on (zeroed before each run). */
const count = {
  reads: 0,
  socketWrites: 0,
  socketWritevs: 0,
  chunks: 0,
  storeWrites: 0,
  shardBatches: 0,
  records: 0,
}
const receive = Connection.prototype.receive
Connection.prototype.receive = function (this: unknown, chunk: Buffer) {
  count.reads++
  return receive.call(this, chunk)
}

// Socket writes by the server's sockets: single-chunk writes and corked runs (writev).
const { Socket } = await import('node:net')
type Writes = {
  _write: (this: unknown, ...a: unknown[]) => void
  _writev: (this: unknown, chunks: unknown[], cb: unknown) => void
}
const sp = Socket.prototype as unknown as Writes
const write1 = sp._write
const writev = sp._writev
sp._write = function (this: unknown, ...a: unknown[]) {
  count.socketWrites++
  count.chunks++
  return write1.apply(this, a)
}
sp._writev = function (this: unknown, chunks: unknown[], cb: unknown) {
  count.socketWritevs++
  count.chunks += chunks.length
  return writev.call(this, chunks, cb)
}

// Store writes: the engine's append (one transaction) and group commit (one transaction for every
// shard's batch).
const base = serverBuild === 'dist' ? '../../dist/src/coordinator/storage/' : '../../src/coordinator/storage/'
const engine = (
  storage === 'memory'
    ? (await import(`${base}memory.js`)).MemoryRecordStore
    : (await import(`${base}sqlite.js`)).SqliteRecordStore
) as { prototype: Record<string, (...a: unknown[]) => Promise<void>> }
for (const method of ['append', 'appendBatches']) {
  const original = engine.prototype[method]
  engine.prototype[method] = function (this: unknown, ...args: unknown[]) {
    count.storeWrites++
    if (method === 'append') {
      count.shardBatches++
      count.records += (args[1] as unknown[]).length
    } else {
      const batches = args[0] as { records: unknown[] }[]
      count.shardBatches += batches.length
      for (const b of batches) count.records += b.records.length
    }
    return original.apply(this, args)
  }
}

const SYSCALLS = [
  'epoll_wait',
  'epoll_pwait',
  'read',
  'write',
  'writev',
  'fcntl',
  'pwrite64',
  'pread64',
  'fsync',
  'fdatasync',
  'ftruncate',
  'futex',
] as const
type Counts = { main: Map<string, number>; others: Map<string, number> }

/** Counts the system calls of this process's threads while `work` runs (null without perf). */
async function syscallsDuring<T>(work: () => Promise<T>): Promise<{ result: T; counts: Counts | null }> {
  const events = SYSCALLS.map((s) => `syscalls:sys_enter_${s}`).join(',')
  const perf = spawn(
    'perf',
    ['stat', '--no-inherit', '-x', ',', '--per-thread', '-p', String(process.pid), '-e', events],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  let text = ''
  perf.stderr.on('data', (d: Buffer) => {
    text += d.toString()
  })
  // perf ends on SIGINT with its counts (the exit then has no code, only the signal).
  const exited = new Promise<boolean>((r) => {
    perf.once('exit', () => r(true))
    perf.once('error', () => r(false))
  })
  // perf needs a moment to attach to every thread.
  await new Promise((r) => setTimeout(r, 300))
  const result = await work()
  perf.kill('SIGINT')
  if (!(await exited) || text === '') return { result, counts: null }
  const counts: Counts = { main: new Map(), others: new Map() }
  for (const line of text.split('\n')) {
    // <comm>-<tid>,<count>,<unit>,<event>,…
    const cols = line.split(',')
    if (cols.length < 4) continue
    const tid = Number(cols[0].slice(cols[0].lastIndexOf('-') + 1))
    const n = Number(cols[1])
    const name = cols[3].replace('syscalls:sys_enter_', '')
    if (!Number.isFinite(n)) continue
    const m = tid === process.pid ? counts.main : counts.others
    m.set(name, (m.get(name) ?? 0) + n)
  }
  return { result, counts }
}

const f1 = (n: number) => n.toFixed(1)
const f2 = (n: number) => n.toFixed(2)
const gcEvents: TraceEvent[] = []
const gc = observeGc(gcEvents)

const bench = await startBenchServer(storage)
const port = bench.server.address.port
// The bare server answers what Topograph answers.
const { WireClient } = await import('../../test/server/wire-client.js')
const probe = await WireClient.connect(port)
probe.write(frames[0])
const answer = withSizePrefix((await probe.nextFrame()) as Buffer)
probe.close()
const bare = await bareServer(answer)

console.log(`server build: ${serverBuild}; ${storage}, ${shape}`)
for (let run = 0; run < runs; run++) {
  const full = await runLoad({ ...spec, port })
  const rate = rps(full) / 2
  const bareHalf = await runLoad({ ...spec, port: bare.port, rate })
  const load0 = loadavg()[0]
  for (const k of Object.keys(count) as (keyof typeof count)[]) count[k] = 0
  gcEvents.length = 0
  const main0 = mainThreadStat()
  let half: Measured | undefined
  const { counts } = await syscallsDuring(async () => {
    half = await profiled(`half-${storage}-${shape}-run${run + 1}`, () => runLoad({ ...spec, port, rate }))
    return half
  })
  const m = half as Measured
  const main1 = mainThreadStat()
  const n = m.answered
  const mainUs = main0 === null || main1 === null ? Number.NaN : (main1.onCpu - main0.onCpu) / 1000
  const waitUs = main0 === null || main1 === null ? Number.NaN : (main1.waiting - main0.waiting) / 1000
  const wallS = m.seconds + spec.warmupSeconds
  console.log(
    `run ${run + 1}, load average ${f1(load0)}–${f1(loadavg()[0])}: closed loop ${fmt(rps(full))} req/s at ${f1(full.cpuUsPerRequest)} µs CPU/req (generator ${f1((full.generatorCpuUs ?? 0) / full.answered)}); half ${fmt(rate)} req/s`,
  )
  console.log(
    `  bare server at that rate: p50 ${f2(bareHalf.p50)} p99 ${f2(bareHalf.p99)} p99.9 ${f2(bareHalf.p999 ?? Number.NaN)} ms; server ${f1(bareHalf.cpuUsPerRequest)} µs/req, generator ${f1((bareHalf.generatorCpuUs ?? 0) / bareHalf.answered)} µs/req`,
  )
  console.log(
    `  Topograph: p50 ${f2(m.p50)} p99 ${f2(m.p99)} p99.9 ${f2(m.p999 ?? Number.NaN)} max ${f2(m.max)} ms; ${f1(m.cpuUsPerRequest)} µs CPU/req (main thread ${f1(mainUs / n)}, busy ${(mainUs / (wallS * 1e4)).toFixed(0)} % of the run, waited for a CPU ${fmt(waitUs / 1000)} ms); generator ${f1((m.generatorCpuUs ?? 0) / n)} µs/req`,
  )
  const turns =
    counts === null
      ? Number.NaN
      : (counts.main.get('epoll_wait') ?? 0) + (counts.main.get('epoll_pwait') ?? 0)
  console.log(
    `  per second: ${fmt(n / wallS)} answers, ${fmt(turns / wallS)} turns (epoll_wait), ${fmt(count.reads / wallS)} socket reads, ${fmt(count.storeWrites / wallS)} store writes; requests a turn ${f1(n / turns)}, a read ${f1(n / count.reads)}, a store write ${f1(n / count.storeWrites)} (${f1(count.shardBatches / count.storeWrites)} shard batches, ${f1(count.records / count.storeWrites)} records)`,
  )
  console.log(
    `  socket writes a second: ${fmt(count.socketWrites / wallS)} single, ${fmt(count.socketWritevs / wallS)} corked runs; ${f1(count.chunks / (count.socketWrites + count.socketWritevs))} chunks a write, ${f1(n / (count.socketWrites + count.socketWritevs))} answers a write`,
  )
  if (counts !== null) {
    const per = (map: Map<string, number>) =>
      SYSCALLS.filter((s) => (map.get(s) ?? 0) > 0)
        .map((s) => `${s} ${f2((map.get(s) ?? 0) / n)}`)
        .join(', ')
    console.log(`  syscalls a request, main thread: ${per(counts.main)}`)
    console.log(`  syscalls a request, other threads: ${per(counts.others)}`)
    const tx = count.storeWrites
    console.log(
      `  a store write: ${f2((counts.main.get('fcntl') ?? 0) / tx)} fcntl, ${f2((counts.main.get('pwrite64') ?? 0) / tx)} pwrite64 (main thread)`,
    )
  }
  console.log(`  collections: ${describeGcs(gcEvents)}`)
}
gc.disconnect()
await closeServer(bare.server)
await bench.close()
