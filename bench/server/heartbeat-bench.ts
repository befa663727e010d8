/**
 * The steady-heartbeat benchmark both group protocols share: the server under test runs in this
 * process's one JavaScript thread with coordinator.storage=sqlite and then memory; the group's
 * members are joined until stable (the protocol's own `join`), one steady heartbeat per member is
 * decoded and checked (the protocol's `steady`), and the load then replays those frames from a forked
 * child over loopback (4 connections × 16 in flight) next to a bare framing server that answers the
 * same bytes (the ceiling, measured in the same run), then at half the measured rate (open loop) for
 * the latency. Every answer is checked for error code 0. Prints one line per run and a Markdown
 * table of medians.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeResponse, requestFrame, WireClient } from '../../test/server/wire-client.js'
import {
  bareServer,
  closeServer,
  fmt,
  type Measured,
  median,
  profiled,
  rps,
  runLoad,
  withSizePrefix,
} from './load.js'
import { createLogger, parseConfig, type RunningServer, serverBuild, startServer } from './target.js'

export interface HeartbeatBenchSpec<M, R> {
  /** The name in profiles and output (`heartbeat`, `consumer-heartbeat`). */
  readonly name: string
  readonly groups: number
  readonly membersPerGroup: number
  /** The topic the groups read and its partitions (created before the join). */
  readonly topic: string
  readonly partitions: number
  /** Bench-only server settings (timeouts, intervals) on top of the listener and storage. */
  readonly config: Readonly<Record<string, string>>
  readonly apiKey: number
  readonly apiVersion: number
  /** Joins group `g` over `c` until it is stable; returns its members. */
  join(c: WireClient, g: number): Promise<M[]>
  /** The body of a member's steady heartbeat. */
  steadyBody(m: M): unknown
  /** Throws unless the decoded answer to a steady heartbeat changed nothing. */
  checkSteady(m: M, answer: R): void
  /** Response frame offset of the error code the load checks. */
  readonly errorCodeAt: number
}

/** A deterministic shuffle, so consecutive heartbeats go to unrelated groups and shards. */
export function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs]
  let seed = 12345
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    const j = seed % (i + 1)
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

interface Prepared {
  readonly server: RunningServer
  readonly dataDir: string
  readonly frames: Buffer[]
  readonly answer: Buffer
  readonly joinSeconds: number
}

async function prepare<M, R>(
  spec: HeartbeatBenchSpec<M, R>,
  storage: 'sqlite' | 'memory',
): Promise<Prepared> {
  const dataDir = mkdtempSync(join(tmpdir(), `topograph-${spec.name}-bench-`))
  const server = await startServer(
    parseConfig({
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'data.dir': dataDir,
      'coordinator.storage': storage,
      'console.listener': 'none',
      ...spec.config,
    }),
    { logger: createLogger({ level: 'silent' }) },
  )
  const port = server.address.port
  const admin = await WireClient.connect(port)
  await admin.request(19, 7, {
    topics: [
      {
        name: spec.topic,
        numPartitions: spec.partitions,
        replicationFactor: 1,
        assignments: [],
        configs: [],
      },
    ],
    timeoutMs: 1000,
  })
  admin.close()

  const t0 = performance.now()
  const members: M[] = []
  const clients = await Promise.all(Array.from({ length: 16 }, () => WireClient.connect(port)))
  let nextGroup = 0
  await Promise.all(
    clients.map(async (c) => {
      while (nextGroup < spec.groups) members.push(...(await spec.join(c, nextGroup++)))
    }),
  )
  const joinSeconds = (performance.now() - t0) / 1000

  // One steady heartbeat per member, decoded: it must change nothing.
  const c = clients[0]!
  let answer: Buffer | undefined
  const frames: Buffer[] = []
  for (const m of shuffled(members)) {
    const frame = requestFrame(spec.apiKey, spec.apiVersion, 1, spec.steadyBody(m))
    frames.push(frame)
    c.write(frame)
    const raw = (await c.nextFrame()) as Buffer
    spec.checkSteady(m, decodeResponse<R>(spec.apiKey, spec.apiVersion, raw).body)
    answer ??= withSizePrefix(raw)
  }
  for (const k of clients) k.close()
  return { server, dataDir, frames, answer: answer as Buffer, joinSeconds }
}

interface Run {
  bare: Measured
  sqlite: Measured
  sqliteHalf: Measured
  memory: Measured
  memoryHalf: Measured
  joinSeconds: { sqlite: number; memory: number }
  answerBytes: number
}

const pct = (x: number): string => `${(100 * x).toFixed(0)} %`

/** Runs the benchmark `runs` times with `seconds` of load per phase and prints the results. */
export async function runHeartbeatBench<M, R>(
  spec: HeartbeatBenchSpec<M, R>,
  seconds: number,
  runs: number,
): Promise<void> {
  const closed = { seconds, warmupSeconds: 1, connections: 4, depth: 16, errorCodeAt: spec.errorCodeAt }
  const check = (what: string, r: Measured): Measured => {
    if (r.errors > 0)
      throw new Error(`${what}: ${r.errors} answers with error code (first ${r.firstErrorCode})`)
    return r
  }
  const all: Run[] = []
  for (let run = 0; run < runs; run++) {
    const partial: Partial<Run> = { joinSeconds: { sqlite: 0, memory: 0 } }
    for (const storage of ['sqlite', 'memory'] as const) {
      const p = await prepare(spec, storage)
      ;(partial.joinSeconds as Run['joinSeconds'])[storage] = p.joinSeconds
      if (storage === 'sqlite') {
        const bare = await bareServer(p.answer)
        partial.bare = await runLoad({ ...closed, frames: p.frames, port: bare.port })
        partial.answerBytes = p.answer.length
        await closeServer(bare.server)
      }
      const port = p.server.address.port
      const steady = check(
        storage,
        await profiled(`${spec.name}-${storage}-run${run + 1}`, () =>
          runLoad({ ...closed, frames: p.frames, port }),
        ),
      )
      const half = check(
        `${storage} at half load`,
        await runLoad({
          ...closed,
          frames: p.frames,
          port,
          rate: Math.round(rps(steady) / 2),
          maxInFlight: 1000,
        }),
      )
      partial[storage] = steady
      partial[storage === 'sqlite' ? 'sqliteHalf' : 'memoryHalf'] = half
      await p.server.close()
      rmSync(p.dataDir, { recursive: true, force: true })
    }
    const r = partial as Run
    all.push(r)
    console.log(
      `run ${run + 1}: join ${fmt(spec.groups * spec.membersPerGroup)} members ${r.joinSeconds.sqlite.toFixed(1)} s (sqlite) / ${r.joinSeconds.memory.toFixed(1)} s (memory); ` +
        `bare ${fmt(rps(r.bare))}/s, sqlite ${fmt(rps(r.sqlite))}/s (${pct(rps(r.sqlite) / rps(r.bare))}), ` +
        `memory ${fmt(rps(r.memory))}/s (${pct(rps(r.memory) / rps(r.bare))}); CPU µs/heartbeat bare ` +
        `${r.bare.cpuUsPerRequest.toFixed(1)}, sqlite ${r.sqlite.cpuUsPerRequest.toFixed(1)}, memory ` +
        `${r.memory.cpuUsPerRequest.toFixed(1)}; at half load p99 ` +
        `sqlite ${r.sqliteHalf.p99.toFixed(2)} ms, memory ${r.memoryHalf.p99.toFixed(2)} ms`,
    )
  }
  const m = (pick: (r: Run) => number) => median(all.map(pick))
  const ms = (n: number) => n.toFixed(2)
  console.log(
    `\n${spec.groups} groups × ${spec.membersPerGroup} members, response ${all[0]!.answerBytes} B, server build ${serverBuild}, medians of ${runs} run(s)`,
  )
  console.log(
    '| Server | heartbeats/s | p50 / p99 ms (full load) | ratio to bare | CPU µs/heartbeat | CPU ratio | half load: rate/s | p50 / p99 / max ms |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  console.log(
    `| bare framing server | ${fmt(m((r) => rps(r.bare)))} | ${ms(m((r) => r.bare.p50))} / ${ms(m((r) => r.bare.p99))} | 100 % | ` +
      `${m((r) => r.bare.cpuUsPerRequest).toFixed(1)} | 100 % | — | — |`,
  )
  for (const k of ['sqlite', 'memory'] as const) {
    const h = k === 'sqlite' ? 'sqliteHalf' : 'memoryHalf'
    console.log(
      `| Topograph, ${k} | ${fmt(m((r) => rps(r[k])))} | ${ms(m((r) => r[k].p50))} / ${ms(m((r) => r[k].p99))} | ` +
        `${pct(m((r) => rps(r[k]) / rps(r.bare)))} | ${m((r) => r[k].cpuUsPerRequest).toFixed(1)} | ` +
        `${pct(m((r) => r.bare.cpuUsPerRequest / r[k].cpuUsPerRequest))} | ${fmt(m((r) => rps(r[h])))} | ` +
        `${ms(m((r) => r[h].p50))} / ${ms(m((r) => r[h].p99))} / ${ms(m((r) => r[h].max))} |`,
    )
  }
}
