// Where each batch's produce-to-consume latency goes, stage by stage (latency-trace.ts with
// BENCH_STAGES=1). The server runs in this process and is probed in place; the load (producers
// and consumer) reports its own times per batch (load-worker.ts, `stages`). Both are put on
// process.hrtime's clock (CLOCK_MONOTONIC, one clock for every process on the machine); a batch is
// known on both sides by its stamp (the 8-byte send time in its first record's key).
//
// For each measured batch, in order:
//   late       the open-loop schedule's intended send → the actual send (not in the latency: the
//              latency starts at the actual send, the stamp)
//   to append  send → the batch written to the segment: the loopback, the server's event loop busy
//              with something else, the frames before it, validation, and the wait for the turn's
//              one segment write. Split, for a batch appended inside the socket read that served
//              it (not when the write comes at the turn's end), into:
//     to server  send → the start of the server's socket read that served the Produce frame
//     append     that read's start → the batch appended
//   to read    appended → the Fetch's read of it starts. Either the consumer's Fetch was parked and
//              the append woke it (the read starts in a microtask after the producer's run of
//              frames ends), or no Fetch was waiting: the batch waits for the consumer's next
//              Fetch (`fetch arrives`: appended → that Fetch's socket read), then for its read
//   read       the log's read (at once, or on libuv's threadpool when larger than SYNC_READ_BYTES)
//   to write   read done → the answer handed to the socket (encoding, the turn's other work)
//   to load    the socket write → the consumer's read of the whole answer (loopback, the load
//              process's event loop, an answer of several 64 KiB reads)
//   parse      the answer read → decoded and walked (after the latency; it delays the next Fetch)
import type { PartitionLog } from '../../src/log/index.js'
import type { BatchStages } from './load-worker.js'
import { f2 } from './load.js'

/** The partition's store, as the file engine has it (not on the PartitionLog interface). */
export interface StageStore {
  append(bytes: Uint8Array, meta: unknown): unknown
  appendBatches(chunks: readonly Uint8Array[], spans: readonly { readonly size: number }[]): unknown
  read(...args: unknown[]): Uint8Array | Promise<Uint8Array>
}

export interface Stages {
  /** Start of the server socket read under way (NaN outside one). */
  receiving: number
  /** A server socket read begins. */
  received(chunk: Buffer): void
  /** A chunk handed to a server socket. */
  written(chunk: Uint8Array): void
  /** Prints the stages of the run's measured batches and the slow ones among them. */
  report(load: BatchStages, slowMs: number): void
  clear(): void
}

const hr = (): number => Number(process.hrtime.bigint()) / 1e6

interface AtAppend {
  readonly recv: number
  readonly append: number
}
interface AtRead {
  readonly fetchArrived: number
  readonly readStart: number
  readonly readDone: number
  readonly threadpool: boolean
  /** The Fetch had found nothing and was parked; an append woke it. */
  readonly woken: boolean
}

/** Copies `out.length` bytes from `pos` bytes into `chunks[chunk]` onward, across chunk ends. */
function copyAt(chunks: readonly Uint8Array[], chunk: number, pos: number, out: Buffer): void {
  let c = chunk
  let p = pos
  for (let i = 0; i < out.length; i++) {
    while (c < chunks.length && p >= chunks[c].byteLength) {
      p -= chunks[c].byteLength
      c++
    }
    out[i] = c < chunks.length ? chunks[c][p] : 0
    p++
  }
}

/** The stamps of the batches in `records`. */
function stampsIn(records: Uint8Array, stampAt: number): number[] {
  const b = Buffer.from(records.buffer, records.byteOffset, records.byteLength)
  const out: number[] = []
  let pos = 0
  while (pos + 12 <= b.length) {
    const len = b.readInt32BE(pos + 8)
    if (pos + 12 + len > b.length) break
    out.push(b.readDoubleLE(pos + stampAt))
    pos += 12 + len
  }
  return out
}

export function traceStages(log: PartitionLog, store: StageStore, stampAt: number): Stages {
  const atAppend = new Map<number, AtAppend>()
  const atRead = new Map<number, AtRead>()
  const atWrite = new Map<number, number>()
  /** Batches read and not yet written, by the buffer their bytes lie in. */
  const unwritten = new Map<ArrayBufferLike, number[]>()
  let lastFetchArrived = Number.NaN
  let lastReadEmpty = false
  let lastStoreReadAsync = false

  const storeAppend = store.append
  store.append = function (this: unknown, bytes: Uint8Array, meta: unknown) {
    const r = storeAppend.call(this, bytes, meta)
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    if (b.length >= stampAt + 8)
      atAppend.set(b.readDoubleLE(stampAt), { recv: stages.receiving, append: hr() })
    return r
  }
  // A turn's appends to the partition go to the store together (one segment write a turn): each
  // batch's stamp is found at its span's start, and may lie across two chunks.
  const storeAppendBatches = store.appendBatches
  store.appendBatches = function (this: unknown, chunks, spans) {
    const r = storeAppendBatches.call(this, chunks, spans)
    const t = hr()
    const stamp = Buffer.alloc(8)
    let chunk = 0
    let inChunk = 0
    for (const span of spans) {
      copyAt(chunks, chunk, inChunk + stampAt, stamp)
      atAppend.set(stamp.readDoubleLE(0), { recv: stages.receiving, append: t })
      inChunk += span.size
      while (chunk < chunks.length && inChunk >= chunks[chunk].byteLength) {
        inChunk -= chunks[chunk].byteLength
        chunk++
      }
    }
    return r
  }
  const storeRead = store.read
  store.read = function (this: unknown, ...args: unknown[]) {
    const r = storeRead.apply(this, args)
    lastStoreReadAsync = !(r instanceof Uint8Array)
    return r
  }
  const logRead = log.read
  log.read = function (this: PartitionLog, ...args: Parameters<PartitionLog['read']>) {
    const readStart = hr()
    const fetchArrived = lastFetchArrived
    const woken = lastReadEmpty
    lastStoreReadAsync = false
    const p = logRead.apply(this, args)
    const threadpool = lastStoreReadAsync
    return p.then((r) => {
      const readDone = hr()
      lastReadEmpty = r.records.byteLength === 0
      const stamps = stampsIn(r.records, stampAt)
      for (const stamp of stamps) atRead.set(stamp, { fetchArrived, readStart, readDone, threadpool, woken })
      if (stamps.length > 0) unwritten.set(r.records.buffer, stamps)
      return r
    })
  }

  const stages: Stages = {
    receiving: Number.NaN,
    received(chunk) {
      const t = hr()
      this.receiving = t
      // The consumer's Fetch (api key 1), read whole: the load sends one at a time.
      if (chunk.byteLength >= 6 && chunk.readInt16BE(4) === 1) lastFetchArrived = t
    },
    written(chunk) {
      const stamps = unwritten.get(chunk.buffer)
      if (stamps === undefined) return
      unwritten.delete(chunk.buffer)
      const t = hr()
      for (const s of stamps) atWrite.set(s, t)
    },
    report(load, slowMs) {
      report(load, slowMs, atAppend, atRead, atWrite)
    },
    clear() {
      atAppend.clear()
      atRead.clear()
      atWrite.clear()
      unwritten.clear()
    },
  }
  return stages
}

const STAGES = [
  'late',
  'to append',
  '  (to server)',
  '  (append)',
  'to read',
  '  (parked, woken)',
  '  (fetch arrives)',
  'read',
  '  (at once)',
  '  (threadpool)',
  'to write',
  'to load',
  '  (first byte)',
  'parse',
] as const
type Stage = (typeof STAGES)[number]

function report(
  load: BatchStages,
  slowMs: number,
  atAppend: Map<number, AtAppend>,
  atRead: Map<number, AtRead>,
  atWrite: Map<number, number>,
): void {
  const c = load.hrMinusNow
  const all = new Map<Stage, number[]>(STAGES.map((s) => [s, []]))
  const slow = new Map<Stage, number[]>(STAGES.map((s) => [s, []]))
  let n = 0
  let nSlow = 0
  let unmatched = 0
  let resumed = 0
  let woken = 0
  let threadpool = 0
  let answersBatches = 0
  /** Of the slow batches, which stage was the largest. */
  const largest = new Map<string, number>()
  for (let i = 0; i < load.sent.length; i++) {
    const stamp = load.sent[i]
    const a = atAppend.get(stamp)
    const r = atRead.get(stamp)
    const w = atWrite.get(stamp)
    if (a === undefined || r === undefined || w === undefined) {
      unmatched++
      continue
    }
    n++
    const sent = stamp + c
    const latency = load.complete[i] - stamp
    const isSlow = latency > slowMs
    if (isSlow) nSlow++
    if (Number.isNaN(a.recv)) resumed++
    if (r.woken) woken++
    if (r.threadpool) threadpool++
    answersBatches += load.perAnswer[i]
    const v: [Stage, number][] = [
      ['late', load.sent[i] - load.intended[i]],
      ['to append', a.append - sent],
      ['  (to server)', a.recv - sent],
      ['  (append)', a.append - a.recv],
      ['to read', r.readStart - a.append],
      [
        r.woken ? '  (parked, woken)' : '  (fetch arrives)',
        r.woken ? r.readStart - a.append : r.fetchArrived - a.append,
      ],
      ['read', r.readDone - r.readStart],
      [r.threadpool ? '  (threadpool)' : '  (at once)', r.readDone - r.readStart],
      ['to write', w - r.readDone],
      ['to load', load.complete[i] + c - w],
      ['  (first byte)', load.firstByte[i] + c - w],
      ['parse', load.parsed[i] - load.complete[i]],
    ]
    let worst = ''
    let worstMs = -1
    for (const [k, ms] of v) {
      if (Number.isNaN(ms)) continue
      all.get(k)?.push(ms)
      if (isSlow) slow.get(k)?.push(ms)
      if (isSlow && !k.startsWith(' ') && k !== 'late' && k !== 'parse' && ms > worstMs) {
        worst = k
        worstMs = ms
      }
    }
    if (isSlow) largest.set(worst, (largest.get(worst) ?? 0) + 1)
  }
  const q = (xs: number[], p: number) => {
    if (xs.length === 0) return Number.NaN
    const s = [...xs].sort((x, y) => x - y)
    return s[Math.min(s.length - 1, Math.floor(s.length * p))]
  }
  const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / Math.max(1, xs.length)
  console.log(
    `  stages of ${n} batches (${unmatched} not matched; ${resumed} appended in a resumed run, ${woken} read by a woken Fetch, ${threadpool} read on the threadpool; ${f2(answersBatches / Math.max(1, n))} batches in the answer of a batch on average), ms:`,
  )
  console.log(
    `    stage              | all: mean / p50 / p99 (n)       | over ${slowMs} ms (${nSlow}): mean / p50 / p99 (n)`,
  )
  for (const k of STAGES) {
    const xs = all.get(k) as number[]
    const ys = slow.get(k) as number[]
    console.log(
      `    ${k.padEnd(18)} | ${f2(mean(xs))} / ${f2(q(xs, 0.5))} / ${f2(q(xs, 0.99))} (${xs.length})`.padEnd(
        56,
      ) + ` | ${f2(mean(ys))} / ${f2(q(ys, 0.5))} / ${f2(q(ys, 0.99))} (${ys.length})`,
    )
  }
  console.log(
    `    the load processes: CPU ${Math.round(load.cpuMs)} ms; collections ${load.gc.n} (${load.gc.major} mark-compacts), ${f2(load.gc.ms)} ms in all, longest ${f2(load.gc.max)} ms`,
  )
  console.log(
    `    largest stage of a slow batch: ${[...largest]
      .sort((x, y) => y[1] - x[1])
      .map(([k, m]) => `${k} ${m}`)
      .join(', ')}`,
  )
}
