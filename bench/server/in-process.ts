// A Topograph server started in this process for the benchmarks that call the router directly
// (dispatch.ts, produce-dispatch.ts): from src/, from dist/ with TOPOGRAPH_BENCH_BUILD=dist, or from
// another checkout with TOPOGRAPH_BENCH_ROOT=<dir> (a build before a change, for a before/after).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const build = process.env.TOPOGRAPH_BENCH_BUILD === 'dist' ? 'dist/src' : 'src'
export const root = resolve(process.env.TOPOGRAPH_BENCH_ROOT ?? new URL('../..', import.meta.url).pathname)
export const buildName = build
/** Imports a module of the server under test (`path` below src/). */
// biome-ignore lint/suspicious/noExplicitAny: the modules of another checkout are untyped here
export const at = (path: string): Promise<any> => import(pathToFileURL(join(root, build, path)).href)
/** Imports a module of the same build (src/ or dist/) of the checkout at `checkout`. */
// biome-ignore lint/suspicious/noExplicitAny: the modules of another checkout are untyped here
export const atRoot = (checkout: string, path: string): Promise<any> =>
  import(pathToFileURL(join(resolve(checkout), build, path)).href)

/** Starts the server on a fresh data.dir under `parent` (memory coordinator storage, no console). */
export async function startInProcess(prefix: string, parent = tmpdir()) {
  const { startServer } = await at('server/server.js')
  const { parseConfig } = await at('server/config.js')
  const { createLogger } = await at('server/logger.js')
  const dataDir = mkdtempSync(join(parent, prefix))
  const server = await startServer(
    parseConfig({
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'data.dir': dataDir,
      'coordinator.storage': 'memory',
      'console.listener': 'none',
    }),
    { logger: createLogger({ level: 'silent' }) },
  )
  return { server, dataDir }
}

/** A string of its own with the text of `s` (a decoded request's strings are never shared). */
const own = (s: string): string => Buffer.from(s).toString()

/**
 * `count` commits of the Kafka Streams shape (commit-server.ts's `streamsCommitBody`), each as the
 * OffsetCommit handler builds its 20 records: its own group, topic and metadata strings, as
 * decoding a request gives them; commit `c` commits offset 5000 + 20c + p for partition p.
 */
export function streamsCommitRecords(count: number) {
  return Array.from({ length: count }, (_, c) => {
    const group = own('bench-streams-commit')
    const topic = own('bench-streams')
    const commitTimestamp = BigInt(1_700_000_000_000 + c)
    return Array.from({ length: 20 }, (_, p) => ({
      type: 'OffsetCommit',
      key: { group, topic, partition: p },
      value: {
        offset: 5000n + BigInt(c * 20 + p),
        leaderEpoch: -1,
        metadata: own('AQAAAY_streams_task_position_x'.padEnd(32, '=')),
        commitTimestamp,
        expireTimestamp: -1n,
        topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
      },
      valueVersion: 3,
    }))
  })
}

/**
 * Runs `step(i)` for i < count (awaiting it when it returns a promise), 3 rounds; the µs of process
 * CPU (user + system) a step of each round, sorted (the median is the second).
 */
export async function cpuRounds(step: (i: number) => unknown, count: number): Promise<number[]> {
  const rounds: number[] = []
  for (let r = 0; r < 3; r++) {
    const t0 = process.cpuUsage()
    for (let i = 0; i < count; i++) {
      const done = step(i)
      if (done instanceof Promise) await done
    }
    const d = process.cpuUsage(t0)
    rounds.push((d.user + d.system) / count)
  }
  return rounds.sort((a, b) => a - b)
}
