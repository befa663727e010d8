// Shared pieces of the data-plane benchmarks: the forked load generator (load-worker.ts), the
// Topograph server they start, the batch they send and small helpers for reporting.
import { execSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { makeBatch, produceRequest } from '../../test/helpers/data-plane.js'
import { decodeResponse, requestFrame, WireClient } from '../../test/server/wire-client.js'
import { forkLoad, profiled } from '../server/load.js'
import { createLogger, parseConfig, type RunningServer, startServer } from '../server/target.js'
import type { DataLoadResult, DataLoadSpec } from './load-worker.js'

export type { DataLoadResult, DataLoadSpec } from './load-worker.js'
export type Measured = DataLoadResult & { readonly cpuUsPerRequest: number }

const WORKER = fileURLToPath(new URL('./load-worker.ts', import.meta.url))

/**
 * Runs one load in a fresh child process (loopback only) and returns what it measured, with the CPU
 * time this process (the server under load) spent per answer.
 */
export function runLoad(spec: DataLoadSpec): Promise<Measured> {
  return forkLoad<DataLoadSpec, DataLoadResult>(WORKER, spec)
}

/**
 * throughput.ts's latency load: 4 producers at `rate` batches per second in all, one consumer long
 * polling partition 0 of `topic` from `fromOffset`, 1 s of warm-up, all in one forked process
 * (BENCH_CONSUMER=own forks the consumer a process of its own; BENCHMARKS.md, "The segment write,
 * and the consumer in its own process", says why that is not the default on a 2-vCPU machine).
 */
export function latencyLoad(o: {
  readonly port: number
  readonly produceFrame: Uint8Array
  readonly batchAt: number
  readonly stampAt: number
  readonly topic: string
  readonly fromOffset: number
  readonly rate: number
  readonly seconds: number
  readonly slowMs?: number
  readonly stages?: boolean
  readonly timeline?: { readonly bucketMs: number; readonly buckets: number }
}): Promise<Measured> {
  const consumer = process.env.BENCH_CONSUMER === 'own' ? 'own process' : 'same process'
  return runLoad({ mode: 'e2e', partition: 0, producers: 4, warmupSeconds: 1, consumer, ...o })
}

/**
 * Fills a partition with a closed-loop Produce load (4 connections × 8 in flight) of one request
 * frame for `seconds`, as throughput.ts's throughput runs fill the log before its latency runs.
 */
export async function fillLog(
  port: number,
  frame: Uint8Array,
  topic: string,
  seconds: number,
): Promise<void> {
  if (seconds <= 0) return
  await runLoad({
    mode: 'closed',
    port,
    frames: [frame],
    seconds,
    warmupSeconds: 0,
    connections: 4,
    depth: 8,
    // ProduceResponse v12: correlation id, header tags, responses (1), name, partitions (1), index.
    errorCodeAt: 4 + 1 + 1 + 1 + topic.length + 1 + 4,
  })
}

/**
 * A Produce v12 request frame (acks=1) carrying `batch` to partition 0 of `topic`, and where the
 * batch starts in it (the load rewrites its stamp there on every send).
 */
export function produceFrame(topic: string, batch: Uint8Array): { frame: Uint8Array; batchAt: number } {
  const frame = requestFrame(0, 12, 1, produceRequest([{ topic, partition: 0, records: batch }], 1))
  return { frame, batchAt: frame.indexOf(Buffer.from(batch)) }
}

/** Two measurements of one load as one: counts and times added, latencies and CPU averaged by answers. */
export function merged(a: Measured, b: Measured): Measured {
  const n = Math.max(1, a.answered + b.answered)
  return {
    requests: a.requests + b.requests,
    answered: a.answered + b.answered,
    bytes: a.bytes + b.bytes,
    seconds: a.seconds + b.seconds,
    p50: (a.p50 + b.p50) / 2,
    p99: Math.max(a.p99, b.p99),
    max: Math.max(a.max, b.max),
    errors: a.errors + b.errors,
    firstErrorCode: a.firstErrorCode || b.firstErrorCode,
    cpuUsPerRequest: (a.cpuUsPerRequest * a.answered + b.cpuUsPerRequest * b.answered) / n,
  }
}

/**
 * The ceiling and Topograph under the same load, in the order ceiling, Topograph, Topograph,
 * ceiling (half the time each), so that a change in what else the machine runs weighs on both alike.
 */
export async function sideBySide(
  ceiling: DataLoadSpec,
  topograph: DataLoadSpec,
  profileName?: string,
): Promise<{ ceiling: Measured; topograph: Measured }> {
  const half = <T extends DataLoadSpec>(s: T): T => ({ ...s, seconds: s.seconds / 2 })
  const c1 = phase('ceiling 1', await runLoad(half(ceiling)))
  const t1 = phase('Topograph 1', await profiledLoad(profileName, half(topograph)))
  const t2 = phase('Topograph 2', await runLoad(half(topograph)))
  const c2 = phase('ceiling 2', await runLoad(half(ceiling)))
  return { ceiling: merged(c1, c2), topograph: merged(t1, t2) }
}

/** BENCH_PHASES=1 prints each half-phase's CPU per request as it ends (where warm-up shows). */
function phase(name: string, m: Measured): Measured {
  if (process.env.BENCH_PHASES === '1')
    console.log(`  phase ${name}: ${m.requests} requests, CPU µs/request ${m.cpuUsPerRequest.toFixed(1)}`)
  return m
}

function profiledLoad(name: string | undefined, spec: DataLoadSpec): Promise<Measured> {
  return name === undefined ? runLoad(spec) : profiled(name, () => runLoad(spec))
}

/** Records per batch and value bytes per record: 16 × 1 KiB, a Java producer's 16 KiB batch. */
export const RECORDS_PER_BATCH = 16
export const VALUE_BYTES = 1024
/** The first record's key: 8 bytes the latency run overwrites with the send time. */
const STAMP_KEY = 'STAMP###'

/**
 * One uncompressed batch of 16 records with 1 KiB values (no producer id, as a producer with
 * idempotence off sends it), and where in it the first record's 8-byte key is.
 */
export function benchBatch(keyOf?: (i: number) => string): { batch: Uint8Array; stampAt: number } {
  const value = 'v'.repeat(VALUE_BYTES)
  const now = Date.now()
  const batch = makeBatch(
    Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({
      key: keyOf === undefined ? (i === 0 ? STAMP_KEY : `key${String(i).padStart(5, '0')}`) : keyOf(i),
      value,
      // Now: a timestamp older than retention.ms would let the retention pass delete the data.
      timestamp: now + i,
    })),
  )
  const stampAt = Buffer.from(batch).indexOf(STAMP_KEY)
  return { batch, stampAt }
}

export interface BenchServer {
  readonly server: RunningServer
  readonly dataDir: string
  readonly client: WireClient
}

/** A Topograph server with the default (file) log engine in a fresh data.dir, in this process. */
export async function startBench(
  settings: Record<string, string> = {},
  dataDir?: string,
): Promise<BenchServer> {
  const dir = dataDir ?? mkdtempSync(join(process.env.BENCH_DATA_DIR ?? tmpdir(), 'topograph-bench-data-'))
  // Gigabytes of logs must not outlive a failed run.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  const server = await startServer(
    parseConfig({
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'data.dir': dir,
      'console.listener': 'none',
      ...settings,
    }),
    { logger: createLogger({ level: 'silent' }) },
  )
  const client = await WireClient.connect(server.address.port)
  return { server, dataDir: dir, client }
}

/** CreateTopics v7 of one topic; throws unless it was created (waits as long as that takes). */
export async function createTopic(
  c: WireClient,
  name: string,
  partitions: number,
  configs: Record<string, string> = {},
): Promise<void> {
  c.write(
    requestFrame(19, 7, 1, {
      topics: [
        {
          name,
          numPartitions: partitions,
          replicationFactor: 1,
          assignments: [],
          configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })),
        },
      ],
      timeoutMs: 600_000,
    }),
  )
  const frame = await c.nextFrame(600_000)
  if (frame === null) throw new Error('the server closed the connection')
  const { body } = decodeResponse<{ topics: { errorCode: number; errorMessage: string | null }[] }>(
    19,
    7,
    frame,
  )
  if (body.topics[0].errorCode !== 0) throw new Error(`CreateTopics ${name}: ${body.topics[0].errorMessage}`)
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

export const mb = (bytes: number): number => bytes / 1e6
export const f1 = (n: number): string => n.toFixed(1)
export const f2 = (n: number): string => n.toFixed(2)
export const pct = (n: number): string => `${Math.round(100 * n)} %`

/** The machine's load average now, for the report. */
export function loadAverage(): string {
  try {
    return execSync('uptime', { encoding: 'utf8' })
      .trim()
      .replace(/^.*load average: /, '')
  } catch {
    return '?'
  }
}

/**
 * MB/s that loopback TCP itself carries here: a server writing 1 MiB buffers as fast as the socket
 * takes them to a client in the same process that discards them, for `seconds`. Bulk transfers are
 * bounded by this before any server work (on a busy machine, TCP pacing can hold it far below the
 * memory bandwidth).
 */
export async function loopbackMBps(seconds = 2): Promise<number> {
  const { createServer, connect } = await import('node:net')
  const buf = Buffer.alloc(1 << 20, 1)
  const server = createServer((s) => {
    const go = () => {
      while (!s.destroyed && s.write(buf));
    }
    s.on('drain', go)
    s.on('error', () => undefined)
    go()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  const bytes = await new Promise<number>((resolve) => {
    const c = connect(port, '127.0.0.1')
    let n = 0
    const t0 = performance.now()
    c.on('data', (d: Buffer) => {
      n += d.length
      if (performance.now() - t0 >= seconds * 1000) {
        c.destroy()
        resolve(n)
      }
    })
  })
  server.close()
  return mb(bytes) / seconds
}
