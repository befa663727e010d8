/**
 * A structure-aware fuzzing campaign against a Topograph server in this process.
 *
 *   npm run fuzz -- [--frames N] [--from I] [--seed S] [--lanes L] [--timeout-ms T] [--max-rss-mb M]
 *                   [--storage sqlite|memory] [--batch B] [--only INDEX]... [--hex FRAMEHEX]...
 *                   [--out FILE] [--log-level L]
 *
 * Frame i of seed S is a random valid request of a served API version (built from the schema files
 * and encoded with the generated codec), then mutated (values, lengths, varints, tagged fields,
 * record batches, header, framing, raw bytes): see frames.ts and mutate.ts. L lanes each take blocks
 * of B frames and send them on a connection of their own: the frames that are one complete request
 * owing an answer pipelined in one write (the server answers them in order, and when it refuses one
 * it closes after answering those before it, so the answers say which it refused; the frames after
 * it go again on a new connection), the others (framing, partial frames, SASL, Produce with acks=0)
 * one at a time. The checks:
 *
 *   - every complete frame is answered, or the server closes the connection, within T ms (of the
 *     answer to the frame before it, when pipelined; JoinGroup
 *     and SyncGroup may be held back by a rebalance, as in Kafka: they go on connections of their
 *     own and are let go after a short wait); a size prefix below 0 or above the limit is closed;
 *   - a frame that decodes as a request of a served version (other than SASL) is answered, not
 *     closed, as Kafka answers any such request (with an error if need be);
 *   - a response to an intact header carries its correlation id and decodes at its API version;
 *   - no uncaught exception or unhandled rejection; the event loop never stalls for long;
 *   - the process RSS stays under M MB;
 *   - a control connection sending ApiVersions every 250 ms is answered within T ms throughout.
 *
 * A finding prints its kind, the seed, the frame index, the mutation and the frame's hex, and how to
 * send that frame again (--seed S --only INDEX, or --hex). With --lanes 1 the order of frames is
 * exactly reproducible; with more lanes it is the frames that are, not their interleaving.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { Worker } from 'node:worker_threads'
import { decodeResponse, encodeRequestFrame } from '../../src/protocol/frames.js'
import type { ApiMessageTypes } from '../../src/protocol/generated/registry.js'
import { parseConfig } from '../../src/server/config.js'
import type { LogLevel } from '../../src/server/config-defs.js'
import { createLogger } from '../../src/server/logger.js'
import { startServer } from '../../src/server/server.js'
import { type AdvertisedApi, buildFrame, type Frame, framePlan, MAY_WAIT_APIS } from './frames.js'
import { parseSeed } from './rng.js'
import { type Expectation, expectationOf, FuzzConnection, pipelinable, wellFormedRequest } from './wire.js'

const { values } = parseArgs({
  options: {
    frames: { type: 'string', default: '10000' },
    from: { type: 'string', default: '0' },
    seed: { type: 'string' },
    lanes: { type: 'string', default: '4' },
    'timeout-ms': { type: 'string', default: '10000' },
    'may-wait-ms': { type: 'string', default: '200' },
    'max-rss-mb': { type: 'string', default: '1536' },
    storage: { type: 'string', default: 'sqlite' },
    only: { type: 'string', multiple: true },
    hex: { type: 'string', multiple: true },
    out: { type: 'string' },
    'progress-every': { type: 'string', default: '20000' },
    batch: { type: 'string', default: '16' },
    'log-level': { type: 'string', default: 'silent' },
  },
})

const seed = parseSeed(values.seed ?? String(Date.now() % 2 ** 31))
const total = Number(values.frames)
const from = Number(values.from)
const laneCount = Math.max(1, Number(values.lanes))
const timeoutMs = Number(values['timeout-ms'])
const mayWaitMs = Number(values['may-wait-ms'])
const maxRss = Number(values['max-rss-mb']) * 2 ** 20
const batchSize = Math.max(1, Number(values.batch))

interface Finding {
  readonly kind: string
  readonly seed: number
  readonly frame: number | null
  readonly api: string
  readonly mutation: string
  readonly hex: string
  readonly detail: string
}
const findings: Finding[] = []
const shownBySignature = new Map<string, number>()
const findingsFile = values.out
if (findingsFile) mkdirSync(dirname(findingsFile), { recursive: true })

function report(kind: string, frame: Frame | null, detail: string, bytes?: Buffer): void {
  const hex = (bytes ?? (frame ? Buffer.concat(frame.mutated.chunks) : Buffer.alloc(0))).toString('hex')
  const f: Finding = {
    kind,
    seed,
    frame: frame?.index ?? null,
    api: frame ? `${frame.api.name}(${frame.api.apiKey}) v${frame.version}` : '-',
    mutation: frame?.mutated.mutation ?? '-',
    hex,
    detail,
  }
  findings.push(f)
  if (findingsFile) writeFileSync(findingsFile, `${JSON.stringify(f)}\n`, { flag: 'a' })
  const signature = `${kind} ${f.api.replace(/ v\d+$/, '')} ${frame?.mutated.family ?? ''}`
  const shown = shownBySignature.get(signature) ?? 0
  shownBySignature.set(signature, shown + 1)
  if (shown >= 3) return
  console.log(
    `FINDING ${kind} seed=${seed} frame=${f.frame ?? '-'} api=${f.api} mutation="${f.mutation}": ${detail}`,
  )
  console.log(`  hex ${hex.length > 4000 ? `${hex.slice(0, 4000)}… (${hex.length / 2} bytes)` : hex}`)
  if (frame) console.log(`  again: npm run fuzz -- --seed ${seed} --only ${frame.index}`)
}

// --- the server -----------------------------------------------------------------------------
const dataDir = mkdtempSync(join(tmpdir(), 'topograph-fuzz-'))
const server = await startServer(
  parseConfig({
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'data.dir': dataDir,
    'coordinator.storage': values.storage ?? 'sqlite',
    'console.listener': 'none',
    'group.initial.rebalance.delay.ms': '0',
  }),
  { logger: createLogger({ level: (values['log-level'] ?? 'silent') as LogLevel }) },
)
const port = server.address.port

// The APIs and versions to fuzz are the ones the server advertises.
async function advertisedApis(): Promise<AdvertisedApi[]> {
  const conn = await FuzzConnection.open(port)
  try {
    await conn.write([
      encodeRequestFrame(18, 3, 0, 'kfuzz-plan', {
        clientSoftwareName: 'kfuzz',
        clientSoftwareVersion: '1',
      } as ApiMessageTypes[18]['request']),
    ])
    const o = await conn.take(1, timeoutMs)
    if (o.responses.length === 0) throw new Error('the server did not answer ApiVersions')
    const { body } = decodeResponse(18, 3, o.responses[0])
    if (body.errorCode !== 0) throw new Error(`ApiVersions answered error ${body.errorCode}`)
    return body.apiKeys.map((k) => ({ apiKey: k.apiKey, minVersion: k.minVersion, maxVersion: k.maxVersion }))
  } finally {
    conn.destroy()
  }
}
const plan = framePlan(await advertisedApis())

process.on('uncaughtException', (e) => {
  report('crash', null, `uncaught exception: ${e.stack ?? e}; frames in flight: ${inFlight()}`)
})
process.on('unhandledRejection', (e) => {
  report('crash', null, `unhandled rejection: ${(e as Error)?.stack ?? e}; frames in flight: ${inFlight()}`)
})

// --- the watchdog (watchdog.mjs, a worker: it still runs when this thread is stuck) ------------
const shared = new Float64Array(new SharedArrayBuffer(8 * (2 + 2 * laneCount)))
const stallMs = Math.max(30_000, timeoutMs * 3)
shared.fill(-1)
shared[0] = Date.now()
shared[1] = process.memoryUsage.rss()
const watchdog = new Worker(new URL('./watchdog.mjs', import.meta.url), {
  workerData: { buffer: shared.buffer, stallMs, seed, maxRss, hex: values.hex ?? [] },
})
watchdog.unref()
const beat = setInterval(() => {
  shared[0] = Date.now()
}, 100)

/** The frames the lanes are on: each lane's block, first..last. */
function inFlight(): string {
  const out: string[] = []
  for (let i = 2; i + 1 < shared.length; i += 2)
    if (shared[i]! >= 0)
      out.push(shared[i] === shared[i + 1] ? `${shared[i]}` : `${shared[i]}..${shared[i + 1]}`)
  return out.join(', ')
}

// --- memory -----------------------------------------------------------------------------------
const rssAtStart = process.memoryUsage.rss()
let rssReported = false
const sampler = setInterval(() => {
  const now = process.memoryUsage.rss()
  if (now > maxRss && !rssReported) {
    rssReported = true
    report(
      'rss',
      null,
      `RSS ${(now / 2 ** 20).toFixed(0)} MB above ${values['max-rss-mb']} MB; frames in flight: ${inFlight()}`,
    )
  }
}, 250)

// --- the control connection -----------------------------------------------------------------
const control = { sent: 0, maxMs: 0, failed: false }
let stopping = false
async function controlLoop(): Promise<void> {
  let conn = await FuzzConnection.open(port)
  while (!stopping) {
    const frame = encodeRequestFrame(18, 3, control.sent, 'kfuzz-control', {
      clientSoftwareName: 'kfuzz',
      clientSoftwareVersion: '1',
    } as ApiMessageTypes[18]['request'])
    control.sent++
    await conn.write([frame])
    const o = await conn.take(1, timeoutMs)
    control.maxMs = Math.max(control.maxMs, o.ms)
    if (o.responses.length === 0) {
      report(
        'control',
        null,
        `ApiVersions on the control connection ${o.closed ? 'closed' : `unanswered after ${timeoutMs} ms`}; frames in flight: ${inFlight()}`,
      )
      conn.destroy()
      conn = await FuzzConnection.open(port)
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  conn.destroy()
}

// --- the lanes --------------------------------------------------------------------------------
const stats = {
  frames: 0,
  answered: 0,
  closed: 0,
  partial: 0,
  mayWait: 0,
  responses: 0,
  byFamily: new Map<string, number>(),
}
const held = new Set<Promise<void>>()

function headerApiKey(bytes: Buffer): number {
  return bytes.length >= 6 ? bytes.readInt16BE(4) : -1
}

/** Checks the responses to an intact frame: correlation id, and the body decodes at its version. */
function checkResponse(frame: Frame, response: Buffer): void {
  const family = frame.mutated.family
  if (family === 'header' || family === 'raw' || family === 'framing') return
  if (response.readInt32BE(0) !== frame.correlationId) {
    report('response', frame, `correlation id ${response.readInt32BE(0)}, sent ${frame.correlationId}`)
    return
  }
  if (frame.api.apiKey === 18 && frame.version > frame.api.maxVersion) return
  try {
    decodeResponse(frame.api.apiKey as keyof ApiMessageTypes, frame.version, response)
  } catch (e) {
    report('response', frame, `the response does not decode: ${(e as Error).message}`)
  }
}

async function sendHeld(frame: Frame): Promise<void> {
  const conn = await FuzzConnection.open(port)
  try {
    await conn.write(frame.mutated.chunks)
    const o = await conn.take(1, mayWaitMs)
    if (o.responses.length > 0) checkResponse(frame, o.responses[0]!)
  } finally {
    conn.destroy()
  }
}

/**
 * The request a frame is, when it decodes as a request of a version the server advertises: the
 * codec knows versions the server does not serve (InitProducerId v6), and Kafka closes the
 * connection on those.
 */
function servedRequest(stream: Buffer): ReturnType<typeof wellFormedRequest> {
  const r = wellFormedRequest(stream)
  if (r === null) return null
  const api = plan.apis.find((a) => a.apiKey === r.apiKey)
  return api !== undefined && r.version >= api.minVersion && r.version <= api.maxVersion ? r : null
}

/**
 * A new connection for a lane. A connection the server does not accept within the timeout is a
 * finding (of the frame about to be sent); the lane tries again, three times in all, and then
 * gives up (a finding of its own, see below).
 */
async function laneConnection(frame: Frame): Promise<FuzzConnection> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await FuzzConnection.open(port, '127.0.0.1', timeoutMs)
    } catch (e) {
      report('connect', frame, `${String(e)} (attempt ${attempt} of 3)`)
      if (attempt === 3) throw e
    }
  }
}

interface Sent {
  readonly frame: Frame
  readonly stream: Buffer
}

/**
 * Sends pipelinable frames in one write and checks their answers. When the server closes after
 * answering r of them, frame r is the one it refused (a finding if it is a well-formed request) and
 * the frames after it, which it never read, go again on a new connection: every frame is read by
 * the server once.
 */
async function pipeline(conn: FuzzConnection | null, batch: readonly Sent[]): Promise<FuzzConnection | null> {
  let pending = batch
  while (pending.length > 0) {
    if (conn === null || conn.closed) conn = await FuzzConnection.open(port)
    await conn.write([
      pending.length === 1 ? pending[0]!.stream : Buffer.concat(pending.map((p) => p.stream)),
    ])
    const o = await conn.take(pending.length, timeoutMs, true)
    stats.responses += o.responses.length
    const r = Math.min(o.responses.length, pending.length)
    if (o.badResponseSize !== undefined)
      report(
        'response',
        pending[Math.min(r, pending.length - 1)]!.frame,
        `response size prefix ${o.badResponseSize}`,
      )
    for (let j = 0; j < r; j++) checkResponse(pending[j]!.frame, o.responses[j]!)
    stats.answered += r
    if (o.responses.length > pending.length) {
      conn.destroy()
      conn = null
    }
    if (r === pending.length) break
    const refused = pending[r]!
    if (o.closed) {
      stats.closed++
      const wellFormed = servedRequest(refused.stream)
      if (wellFormed !== null)
        report(
          'closed',
          refused.frame,
          `a well-formed ${wellFormed.name} v${wellFormed.version} request, and the server closed the connection instead of answering`,
        )
    } else {
      report(
        'hang',
        refused.frame,
        `not answered, and the connection still open, ${timeoutMs} ms after the answer to the frame before it (frame ${r + 1} of ${pending.length} in one write)`,
      )
      conn?.destroy()
    }
    conn = null
    pending = pending.slice(r + 1)
  }
  return conn
}

/** Sends one frame that cannot be pipelined, on the lane's connection, and checks what follows. */
async function single(
  conn: FuzzConnection | null,
  frame: Frame,
  stream: Buffer,
  expected: Expectation,
): Promise<FuzzConnection | null> {
  if (conn === null || conn.closed) conn = await laneConnection(frame)
  await conn.write(frame.mutated.chunks)
  const o = await conn.take(expected.complete, expected.complete > 0 || expected.invalidSize ? timeoutMs : 20)
  stats.responses += o.responses.length
  if (o.badResponseSize !== undefined) report('response', frame, `response size prefix ${o.badResponseSize}`)
  if (o.responses.length > 0) checkResponse(frame, o.responses[0]!)
  if (o.closed) stats.closed++
  // Whether the frame is a well-formed request matters only when it was closed unanswered.
  const wellFormed =
    o.closed && o.responses.length === 0 && expected.complete === 1 && !expected.partial
      ? servedRequest(stream)
      : null
  if (wellFormed !== null) {
    report(
      'closed',
      frame,
      `a well-formed ${wellFormed.name} v${wellFormed.version} request, and the server closed the connection instead of answering`,
    )
  } else if (o.responses.length >= expected.complete && expected.complete > 0) stats.answered++
  if (o.timedOut && expected.complete > 0 && o.responses.length < expected.complete) {
    report(
      'hang',
      frame,
      `${o.responses.length} of ${expected.complete} frames answered and the connection still open after ${timeoutMs} ms`,
    )
  } else if (o.timedOut && expected.invalidSize) {
    report(
      'hang',
      frame,
      `size prefix outside 0..socket.request.max.bytes, and the connection still open after ${timeoutMs} ms`,
    )
  } else if (expected.partial || expected.complete === 0) stats.partial++
  // The connection goes with the frame: what follows such a frame (a framing mutation, a partial
  // frame, a SASL request, a Produce with acks=0) may be a close the server owes to it, which must
  // not be taken for the next frame's.
  conn.destroy()
  return null
}

/**
 * A lane: takes blocks of frames, sends the ones that cannot be pipelined one at a time and the
 * rest in one write per block (JoinGroup and SyncGroup on connections of their own).
 */
async function lane(id: number, nextBlock: () => readonly number[]): Promise<void> {
  let conn: FuzzConnection | null = null
  for (let block = nextBlock(); block.length > 0; block = nextBlock()) {
    shared[2 + 2 * id] = block[0]!
    shared[3 + 2 * id] = block[block.length - 1]!
    const batch: Sent[] = []
    for (const index of block) {
      const frame = buildFrame(plan, seed, index)
      const chunks = frame.mutated.chunks
      const stream = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      stats.frames++
      stats.byFamily.set(frame.mutated.family, (stats.byFamily.get(frame.mutated.family) ?? 0) + 1)
      if (stats.frames % progressEvery === 0) progress()
      if (MAY_WAIT_APIS.has(headerApiKey(stream))) {
        stats.mayWait++
        while (held.size >= 32) await Promise.race(held)
        const p: Promise<void> = sendHeld(frame)
          .catch((e) => report('connect', frame, String(e)))
          .finally(() => held.delete(p))
        held.add(p)
        continue
      }
      const expected = expectationOf(stream)
      if (pipelinable(stream, expected, frame.mutated.family, chunks.length)) batch.push({ frame, stream })
      else conn = await single(conn, frame, stream, expected)
    }
    conn = await pipeline(conn, batch)
    shared[2 + 2 * id] = -1
    shared[3 + 2 * id] = -1
  }
  conn?.destroy()
}

const progressEvery = Number(values['progress-every'])
const started = performance.now()
function progress(): void {
  const s = (performance.now() - started) / 1000
  console.log(
    `[fuzz] ${stats.frames} frames in ${s.toFixed(0)} s (${(stats.frames / s).toFixed(0)}/s), ` +
      `${findings.length} findings, RSS ${(process.memoryUsage.rss() / 2 ** 20).toFixed(0)} MB (peak ${(shared[1]! / 2 ** 20).toFixed(0)})`,
  )
}

const controlDone = controlLoop().catch((e) => report('control', null, String(e)))

if (values.hex && values.hex.length > 0) {
  // Frames given as hex: each on a fresh connection, checked as a lane checks its frames.
  for (const [k, h] of values.hex.entries()) {
    const bytes = Buffer.from(h, 'hex')
    shared[2] = k
    shared[3] = k
    const conn = await FuzzConnection.open(port)
    const expected = expectationOf(bytes)
    await conn.write([bytes])
    const o = await conn.take(expected.complete, timeoutMs)
    const verdict = o.timedOut
      ? 'HANG: no answer and not closed'
      : o.closed && o.responses.length === 0
        ? 'closed'
        : `${o.responses.length} answered`
    console.log(`${h.slice(0, 80)}${h.length > 80 ? '…' : ''}: ${verdict} in ${o.ms.toFixed(0)} ms`)
    if (o.timedOut) report('hang', null, `no answer within ${timeoutMs} ms`, bytes)
    conn.destroy()
  }
} else {
  const indices = values.only ? values.only.map(Number) : null
  const count = indices ? indices.length : total
  console.log(
    `[fuzz] seed ${seed}: ${count} frames${indices ? '' : ` (${from}..${from + count - 1})`} over ${plan.apis.length} APIs, ${laneCount} lanes, server on 127.0.0.1:${port} (${values.storage})`,
  )
  let next = 0
  const nextBlock = (): number[] => {
    const block: number[] = []
    while (next < count && block.length < batchSize) {
      const i = next++
      block.push(indices ? indices[i]! : from + i)
    }
    return block
  }
  // A lane that fails (it could not connect) is a finding; the other lanes go on, and the
  // campaign ends with its summary.
  const lanes = await Promise.allSettled(Array.from({ length: laneCount }, (_, id) => lane(id, nextBlock)))
  for (const [id, l] of lanes.entries())
    if (l.status === 'rejected')
      report('lane', null, `lane ${id} stopped: ${(l.reason as Error)?.stack ?? l.reason}`)
  await Promise.all(held)
}

stopping = true
await controlDone
clearInterval(beat)
// Shutting the server down (every partition's files written and synced, the data removed) is not
// watched: the watchdog gives it ten minutes before it would call the event loop stalled.
const shutdownLimitMs = 600_000
shared[0] = Date.now() + shutdownLimitMs
clearInterval(sampler)
const elapsed = (performance.now() - started) / 1000
const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MB`
const endRss = process.memoryUsage.rss()
// A close that never settles may hold nothing that keeps this process alive (the watchdog's worker
// does not): the process would end with its await unsettled (Node's exit code 13) and no summary.
// This timer keeps it up until the limit and reports the shutdown as a finding.
const shutdownGuard = setTimeout(() => {
  report('shutdown', null, `the server's close() did not complete within ${shutdownLimitMs / 1000} s`)
  process.exit(1)
}, shutdownLimitMs)
await server.close()
clearTimeout(shutdownGuard)
rmSync(dataDir, { recursive: true, force: true })

const byKind = new Map<string, number>()
for (const f of findings) byKind.set(f.kind, (byKind.get(f.kind) ?? 0) + 1)
console.log(`
[fuzz] seed ${seed}: ${stats.frames} frames in ${elapsed.toFixed(0)} s (${(stats.frames / elapsed).toFixed(0)} frames/s)
  families: ${[...stats.byFamily].map(([k, v]) => `${k} ${v}`).join(', ')}
  answered ${stats.answered}, closed by the server ${stats.closed}, incomplete (nothing owed) ${stats.partial}, JoinGroup/SyncGroup on their own connections ${stats.mayWait}
  control ApiVersions: ${control.sent} sent, slowest ${control.maxMs.toFixed(0)} ms
  RSS: ${mb(rssAtStart)} at start, peak ${mb(Math.max(shared[1]!, endRss))}, ${mb(endRss)} at the end
  frames the fuzzer could not map (mutated raw instead): ${plan.mapErrors}
  findings: ${findings.length}${byKind.size > 0 ? ` (${[...byKind].map(([k, v]) => `${k} ${v}`).join(', ')})` : ''}`)
process.exit(findings.length === 0 ? 0 : 1)
