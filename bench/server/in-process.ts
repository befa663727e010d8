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
