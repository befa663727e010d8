// Reading a Prometheus text exposition in tests, and a real server that serves one.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { tempDataDir } from '../server/harness.js'
import { freeLoopbackPort, startTopographProcess, type TopographProcess } from './topograph-process.js'

/** The samples of a Prometheus text exposition: `name{labels}` → value. */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][\w:]*(?:\{[^}]*\})?) (\S+)$/.exec(line)
    assert.ok(m, `not a sample line: ${line}`)
    out.set(m[1], Number(m[2]))
  }
  return out
}

/** One read of `/metrics`: its text, and its samples (under a common name prefix). */
export interface Scrape {
  readonly text: string
  readonly samples: Map<string, number>
  /** The sample `prefix + key`, which must be there. */
  at(key: string): number
}

/** A `topograph start` process serving the console and `/metrics` on a port of its own. */
export interface MetricsServer {
  readonly server: TopographProcess
  /** Reads `/metrics`; `at` looks samples up under `prefix`. */
  scrape(prefix?: string): Promise<Scrape>
  /** Stops the process and removes its data directory. */
  stop(): Promise<void>
}

/**
 * Starts a real server with the console (and so `/metrics`) on a free loopback port, waiting until
 * the console listens (it starts after the Kafka listener).
 */
export async function startMetricsServer(overrides: Record<string, string> = {}): Promise<MetricsServer> {
  const dataDir = tempDataDir()
  const httpPort = await freeLoopbackPort()
  let server: TopographProcess | undefined
  try {
    server = await startTopographProcess({
      'data.dir': dataDir,
      'console.listener': `http://127.0.0.1:${httpPort}`,
      ...overrides,
    })
    const started = server
    const deadline = Date.now() + 30_000
    while (!started.output().includes(`Console listening on http://127.0.0.1:${httpPort}`)) {
      assert.ok(Date.now() < deadline, `the console did not start:\n${started.output()}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  } catch (e) {
    await server?.kill()
    rmSync(dataDir, { recursive: true, force: true })
    throw e
  }
  const running = server
  return {
    server: running,
    async scrape(prefix = '') {
      const res = await globalThis.fetch(`http://127.0.0.1:${httpPort}/metrics`)
      assert.equal(res.status, 200)
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/)
      const text = await res.text()
      const samples = parseMetrics(text)
      return {
        text,
        samples,
        at(key: string): number {
          assert.ok(samples.has(prefix + key), `no sample ${prefix + key} in:\n${text}`)
          return samples.get(prefix + key)!
        },
      }
    },
    async stop() {
      await running.stop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
