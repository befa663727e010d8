// The server's CPU per batch on the produce → fetch path, at a fixed rate: the latency load of
// throughput.ts (4 producers, one batch of 16 × 1 KiB records per Produce, acks=1; a consumer long
// polling from the log end, in the producers' process unless BENCH_CONSUMER=own) after a
// closed-loop fill, with no probes in the server. Per run: the main thread's time on a CPU (the
// event loop's own work, from /proc/self/task/<pid>/schedstat; on a VM, time the host holds the
// vCPU inside a call counts too), the whole process's CPU (process.cpuUsage: libuv's threadpool
// and V8's helper threads included), each per batch consumed; the load's own CPU per batch (the
// producers' process, and the consumer's with BENCH_CONSUMER=own); and the latency (p50 / p99 /
// max). CPU per batch depends much less on the machine's load than the latency does; alternate
// builds to compare them. BENCH_LOAD_PROFILE=<dir> writes a CPU profile of each load process;
// BENCH_PROFILE=<dir> and BENCH_HEAP_SAMPLE=<dir> profile the server's process during each run
// (`profiled` in bench/server/load.ts).
//
//   TOPOGRAPH_BENCH_BUILD=dist node --import tsx bench/data/cpu-per-batch.ts [rate=4294] [seconds=4] [runs=3] [fill-seconds=10]
//
// The fill (as throughput.ts's throughput runs before its latency runs) leaves gigabytes in the
// page cache, so that the runs append into pages the kernel has not handed out recently.
// BENCH_BEFORE=throughput[:seconds[:runs]] runs throughput.ts's throughput phases instead of the
// fill, and BENCH_SETTLE=<run>:<seconds>[:nosync] a `sync` and a pause before run <run>
// (throughput-phases.ts); each run also prints what the kernel did meanwhile (kernel-state.ts).
// BENCH_TURNS=1 counts, per turn of the event loop, the batches the partition's store appended and
// the segment writes they took (a wrapper around the store; it costs a little CPU of its own).
// BENCH_ANSWERS=1 counts the socket writes of the producers' connections and the Produce answers
// each carried (a wrapper around net.Socket's `_write` and `_writev` in this process, the server's).
// Each run also prints the server's heap, open files, segments and threads' CPU (server-state.ts);
// BENCH_RUN_TRACE=1 adds its threadpool file calls and the event loop's delay.
import { Socket } from 'node:net'
import { serverBuild } from '../server/target.js'
import { mainThreadStat } from '../server/thread-stat.js'
import { profiled } from '../server/load.js'
import { describeGcs, observeGc, type TraceEvent } from '../server/gc-events.js'
import { watchKernel } from './kernel-state.js'
import {
  benchBatch,
  createTopic,
  f1,
  f2,
  latencyLoad,
  loadAverage,
  mb,
  produceFrame,
  startBench,
} from './load.js'
import { beforeLatencyRuns, settleBefore } from './throughput-phases.js'
import {
  describeIdle,
  describeStates,
  describeThreads,
  partitionDir,
  serverState,
  threadCpu,
  traceFileCalls,
} from './server-state.js'

const rate = Number(process.argv[2] ?? 4294)
const seconds = Number(process.argv[3] ?? 4)
const runs = Number(process.argv[4] ?? 3)
const fillSeconds = Number(process.argv[5] ?? 10)
const TOPIC = 'bench-cpu'

/**
 * The load's processes' CPU per batch consumed, user + system (user alone in brackets): the
 * producers' process (with the consumer when it runs there), and the consumer's own.
 */
function loadCpu(m: Awaited<ReturnType<typeof latencyLoad>>): string {
  const n = Math.max(1, m.answered)
  const c = m.loadCpuMs
  if (c === undefined) return '?'
  const us = (ms: number, user: number) => `${f1((ms * 1e3) / n)} (${f1((user * 1e3) / n)})`
  return c.consumer === null
    ? `producers and consumer ${us(c.producers, c.producersUser)}`
    : `producers ${us(c.producers, c.producersUser)}, consumer ${us(c.consumer, c.consumerUser ?? 0)}`
}

/**
 * BENCH_TURNS: wraps the store of `log` (PartitionLogImpl's `store`) to count, per turn of the event
 * loop, the batches it appended and its write calls (`append` one each, `appendBatches` one for
 * several, where the engine has it). A turn ends at the check phase (a setImmediate made by the
 * turn's first append).
 */
function countTurns(log: object): { report(): string } {
  const store = (log as { store: Record<string, unknown> }).store
  let batches = 0
  let writes = 0
  let open = false
  const perTurn = new Map<number, number>()
  const writesPerTurn = new Map<number, number>()
  const endTurn = (): void => {
    perTurn.set(batches, (perTurn.get(batches) ?? 0) + 1)
    writesPerTurn.set(writes, (writesPerTurn.get(writes) ?? 0) + 1)
    batches = 0
    writes = 0
    open = false
  }
  const count = (n: number): void => {
    batches += n
    writes++
    if (!open) {
      open = true
      setImmediate(endTurn)
    }
  }
  for (const name of ['append', 'appendBatches']) {
    const f = store[name]
    if (typeof f !== 'function') continue
    store[name] = function (this: unknown, ...args: unknown[]) {
      count(name === 'append' ? 1 : (args[1] as unknown[]).length)
      return f.apply(this, args)
    }
  }
  const histogram = (m: Map<number, number>): string =>
    [...m]
      .sort((a, b) => a[0] - b[0])
      .map(([k, v]) => `${k}:${v}`)
      .join(' ')
  return {
    report() {
      let n = 0
      let b = 0
      let w = 0
      for (const [k, v] of perTurn) {
        n += v
        b += k * v
      }
      for (const [k, v] of writesPerTurn) w += k * v
      const out = `${n} turns with appends, ${f2(b / Math.max(1, n))} batches and ${f2(w / Math.max(1, n))} writes a turn; batches a turn (count:turns) ${histogram(perTurn)}; writes a turn ${histogram(writesPerTurn)}`
      perTurn.clear()
      writesPerTurn.clear()
      return out
    },
  }
}

/**
 * BENCH_ANSWERS: wraps net.Socket's `_write` and `_writev` (this process's sockets: the server's,
 * and the bench's own client, which writes only while the topic is made) to count, per socket write
 * of a producer's connection, the answers it carried. A connection counts as a producer's while
 * every answer it wrote was smaller than `small` bytes (a Produce answer; the consumer's Fetch
 * answers hold a batch). Answers are counted by their size prefixes, so a chunk with several
 * answers encoded in one buffer counts each.
 */
function countAnswers(small: number): { report(): string } {
  const proto = Socket.prototype as unknown as Record<string, (...args: unknown[]) => unknown>
  const consumers = new WeakSet<object>()
  const perWrite = new Map<number, number>()
  let chunks = 0
  const frames = (b: Uint8Array): number => {
    let n = 0
    for (let at = 0; at + 4 <= b.byteLength; n++) {
      const size = (b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]
      if (size < 0 || size >= small) return -1
      at += 4 + size
    }
    return n
  }
  const count = (socket: object, buffers: Uint8Array[]): void => {
    if (consumers.has(socket)) return
    let n = 0
    for (const b of buffers) {
      const k = frames(b)
      if (k < 0) {
        consumers.add(socket)
        return
      }
      n += k
    }
    perWrite.set(n, (perWrite.get(n) ?? 0) + 1)
    chunks += buffers.length
  }
  const write = proto._write
  const writev = proto._writev
  proto._write = function (this: object, ...args: unknown[]) {
    count(this, [args[0] as Uint8Array])
    return write.apply(this, args)
  }
  proto._writev = function (this: object, ...args: unknown[]) {
    count(
      this,
      (args[0] as { chunk: Uint8Array }[]).map((c) => c.chunk),
    )
    return writev.apply(this, args)
  }
  return {
    report() {
      let writes = 0
      let answers = 0
      for (const [k, v] of perWrite) {
        writes += v
        answers += k * v
      }
      const histogram = [...perWrite]
        .sort((a, b) => a[0] - b[0])
        .map(([k, v]) => `${k}:${v}`)
        .join(' ')
      const out = `${writes} socket writes to producers, ${f2(answers / Math.max(1, writes))} answers and ${f2(chunks / Math.max(1, writes))} buffers a write; answers a write (count:writes) ${histogram}`
      perWrite.clear()
      chunks = 0
      return out
    },
  }
}

const bench = await startBench()
const { server, client } = bench
const port = server.address.port
await createTopic(client, TOPIC, 1)
const { batch, stampAt } = benchBatch()
const { frame, batchAt } = produceFrame(TOPIC, batch)
await beforeLatencyRuns(bench, TOPIC, frame, fillSeconds)
const log = server.context.data.logs.partition(TOPIC, 0)!
const turns = process.env.BENCH_TURNS === '1' ? countTurns(log) : null
const answers = process.env.BENCH_ANSWERS === '1' ? countAnswers(1024) : null
console.log(
  `build ${serverBuild}, ${rate} batches/s (${f1(mb(rate * batch.byteLength))} MB/s), ${runs} run(s) of ${seconds} s after ${process.env.BENCH_BEFORE?.startsWith('throughput') ? "throughput.ts's throughput phases" : `${fillSeconds} s of fill`} (log ${f1(mb(log.sizeInBytes))} MB)`,
)
const fileCalls = await traceFileCalls()
const dir = partitionDir(bench.dataDir, TOPIC)
let ended = serverState(dir)
const latency = { port, produceFrame: frame, batchAt, stampAt, topic: TOPIC, rate, seconds }
for (let run = 0; run < runs; run++) {
  await settleBefore(run + 1)
  const state0 = serverState(dir)
  const idle = describeIdle(ended, state0)
  const thread0 = mainThreadStat()
  const threads0 = threadCpu()
  const stopKernel = watchKernel()
  const gcs: TraceEvent[] = []
  const gc = observeGc(gcs)
  const traced = fileCalls?.run()
  const m = await profiled(`latency-run${run + 1}`, () =>
    latencyLoad({ ...latency, fromOffset: log.logEndOffset, slowMs: traced === undefined ? undefined : 10 }),
  )
  const thread1 = mainThreadStat()
  const threads1 = threadCpu()
  ended = serverState(dir)
  const { pages, kernel, threads } = stopKernel()
  gc.disconnect()
  const n = Math.max(1, m.answered)
  const mainUs = thread0 !== null && thread1 !== null ? (thread1.onCpu - thread0.onCpu) / 1e3 / n : Number.NaN
  console.log(
    `run ${run + 1}: ${m.answered} batches; server CPU µs per batch: main thread ${f1(mainUs)}, process ${f1(m.cpuUsPerRequest)}; load's CPU µs per batch: ${loadCpu(m)}; p50 ${f2(m.p50)} ms, p99 ${f2(m.p99)} ms, max ${f2(m.max)} ms; load ${loadAverage()}`,
  )
  if (turns !== null) console.log(`  turns: ${turns.report()}`)
  if (answers !== null) console.log(`  answers: ${answers.report()}`)
  console.log(`  server GCs: ${describeGcs(gcs)}`)
  if (traced !== undefined) console.log(`  ${traced(m.slow ?? [])}`)
  console.log(`  server: ${describeStates(state0, ended, m.answered)}; since the last run: ${idle}`)
  console.log(`  server ${describeThreads(threads0, threads1, m.answered)}`)
  console.log(`  kernel: ${pages}; ${kernel}`)
  console.log(`  kernel threads' CPU: ${threads}`)
}
client.close()
await server.close()
