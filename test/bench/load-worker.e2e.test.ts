// The server benchmarks' load generator (bench/server/load-worker.ts) over loopback sockets: how
// its open loop puts the requests on the wire. One write per request made the generator's own
// system calls, and the segments and acknowledgements of each, part of the half-load tail it
// measures against a server that does nothing (BENCHMARKS.md, "OffsetCommit: the ceiling's floor").
import assert from 'node:assert/strict'
import { Socket } from 'node:net'
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks'
import { test } from 'node:test'
import { bareServer, closeServer } from '../../bench/server/load.js'
import { load } from '../../bench/server/load-worker.js'

/** A 12-byte request frame and a 10-byte answer (size prefix included). */
const request = Buffer.from([0, 0, 0, 8, 0, 8, 0, 9, 0, 0, 0, 1])
const answer = Buffer.from([0, 0, 0, 6, 0, 0, 0, 1, 0, 0])

/**
 * Runs an open loop of `rate` requests a second over two connections against the bare server and
 * records, for each request the generator writes, whether its socket was corked at the time, and
 * how often the generator's sockets were uncorked (each uncork is one write to the kernel).
 */
async function openLoop(writes: 'tick' | 'each' | undefined) {
  const bare = await bareServer(answer)
  const frames = { corked: 0, uncorked: 0 }
  let uncorks = 0
  const write = Socket.prototype.write
  const uncork = Socket.prototype.uncork
  const ours = (s: Socket) => s.remotePort === bare.port
  Socket.prototype.write = function (this: Socket, ...args: unknown[]) {
    if (ours(this)) {
      if (this.writableCorked > 0) frames.corked++
      else frames.uncorked++
    }
    return (write as (...a: unknown[]) => boolean).apply(this, args)
  } as typeof write
  Socket.prototype.uncork = function (this: Socket) {
    if (ours(this)) uncorks++
    uncork.call(this)
  }
  const started = performance.now()
  try {
    const result = await load({
      port: bare.port,
      frames: [request],
      seconds: 0.3,
      warmupSeconds: 0.1,
      connections: 2,
      depth: 1,
      rate: 20_000,
      ...(writes === undefined ? {} : { writes }),
    })
    return { result, frames, uncorks, elapsedMs: performance.now() - started }
  } finally {
    Socket.prototype.write = write
    Socket.prototype.uncork = uncork
    await closeServer(bare.server)
  }
}

test('open loop: the requests a tick sends to a connection leave in one write', async () => {
  const { result, frames, uncorks, elapsedMs } = await openLoop(undefined)
  // 20,000 a second for 0.4 s: about 8,000 requests, 20 a tick, 10 to each connection.
  assert.ok(result.answered >= 4000, `answered ${result.answered}`)
  assert.equal(result.errors, 0)
  assert.equal(frames.uncorked, 0, 'every request written inside its tick’s cork')
  assert.equal(frames.corked, result.answered)
  // One write per connection and tick at most: the 1 ms timer fires at most once a millisecond.
  assert.ok(uncorks <= 2 * Math.ceil(elapsedMs), `${uncorks} writes in ${elapsedMs.toFixed(0)} ms`)
  assert.equal(result.writes, uncorks)
  assert.ok(result.writes < result.answered / 2, `${result.writes} writes for ${result.answered} requests`)
  // Each request is timed from the write that carried it to the read of its answer.
  assert.ok(result.p50 >= 0 && result.p99 >= result.p50 && result.max >= result.p99)
})

test("open loop, writes: 'each': one write per request, as before", async () => {
  const { result, frames, uncorks } = await openLoop('each')
  assert.ok(result.answered >= 4000, `answered ${result.answered}`)
  assert.equal(frames.corked, 0)
  assert.equal(frames.uncorked, result.answered)
  assert.equal(uncorks, 0)
  assert.equal(result.writes, result.answered)
})

/** The major collections of this process while `load` runs a short open loop against the bare server. */
async function majorCollectionsDuring(collectFirst: boolean | undefined): Promise<number> {
  const bare = await bareServer(answer)
  let major = 0
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[])
      if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++
  })
  observer.observe({ entryTypes: ['gc'] })
  try {
    await load({
      port: bare.port,
      frames: [request],
      seconds: 0.1,
      warmupSeconds: 0,
      connections: 1,
      depth: 1,
      rate: 1_000,
      ...(collectFirst === undefined ? {} : { collectFirst }),
    })
    // Entries are delivered after the collection: one more turn for the observer's callback.
    await new Promise((resolve) => setTimeout(resolve, 20))
    return major
  } finally {
    observer.disconnect()
    await closeServer(bare.server)
  }
}

test('collectFirst: the load process collects its whole heap before the load starts', async () => {
  assert.ok((await majorCollectionsDuring(true)) >= 1)
  // Without it, a short load of a small heap makes no full collection.
  assert.equal(await majorCollectionsDuring(undefined), 0)
})

test("closed loop, speedProbe: the machine's speed beside the load, and the answers' reads counted", async () => {
  const bare = await bareServer(answer)
  try {
    const spec = {
      port: bare.port,
      frames: [request],
      seconds: 0.6,
      warmupSeconds: 0.1,
      connections: 2,
      depth: 4,
    }
    const probed = await load({ ...spec, speedProbe: true })
    assert.ok(probed.speedProbe !== undefined)
    // A round every 250 ms of the 0.7 s run, each of three runs of the fixed work.
    assert.ok(probed.speedProbe.rounds >= 2, `${probed.speedProbe.rounds} rounds`)
    assert.ok(probed.speedProbe.fastestUs > 0)
    assert.ok(probed.speedProbe.p90Us >= probed.speedProbe.fastestUs)
    // Every answer came in some read, and a read brings at most what the connections had in flight.
    assert.ok(probed.reads > 0 && probed.reads <= probed.answered)
    assert.ok(probed.answered / probed.reads <= spec.connections * spec.depth)
    const plain = await load(spec)
    assert.equal(plain.speedProbe, undefined)
  } finally {
    await closeServer(bare.server)
  }
})
