// The build of the server the benchmarks start: the TypeScript sources through tsx (the default),
// or the compiled package in dist/ with `TOPOGRAPH_BENCH_BUILD=dist` (run `npm run build` first).
// tsx keeps function names by wrapping closures in a helper, which costs several per cent on the
// request path; the compiled build is what a deployment runs. The benchmark scripts themselves and
// the load generator stay TypeScript either way.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type * as ConfigModule from '../../src/server/config.js'
import type * as LoggerModule from '../../src/server/logger.js'
import type * as ServerModule from '../../src/server/server.js'
import { cliNodeOptions } from '../../test/helpers/topograph-process.js'

export type { RunningServer } from '../../src/server/server.js'

const build = process.env.TOPOGRAPH_BENCH_BUILD ?? 'src'
if (build !== 'src' && build !== 'dist') {
  throw new Error(`TOPOGRAPH_BENCH_BUILD must be src or dist, got ${build}`)
}
const base = build === 'dist' ? '../../dist/src/server/' : '../../src/server/'
if (build === 'dist' && !existsSync(fileURLToPath(new URL(`${base}server.js`, import.meta.url)))) {
  throw new Error('TOPOGRAPH_BENCH_BUILD=dist: dist/src/server/server.js is missing; run `npm run build`')
}

const server = (await import(`${base}server.js`)) as typeof ServerModule
const config = (await import(`${base}config.js`)) as typeof ConfigModule
const logger = (await import(`${base}logger.js`)) as typeof LoggerModule

/** Which build runs: 'src' or 'dist'. */
export const serverBuild: 'src' | 'dist' = build
export const startServer = server.startServer
export const parseConfig = config.parseConfig
export const createLogger = logger.createLogger

/** Imports another module of the server under test (`path` below src/server/, e.g. 'router.js'). */
// biome-ignore lint/suspicious/noExplicitAny: a module of whichever build runs, untyped here
export const serverModule = (path: string): Promise<any> => import(`${base}${path}`)

/**
 * The Node options this process lacks of those `topograph start` runs the server with (the CLI's
 * `#!` line: a young generation of fixed size). The benchmarks start the server in their own
 * process, which otherwise runs with V8's defaults: a young generation that starts at 1 MB a
 * semi-space and grows with what survives (to 16–32 MB after the throughput phases), not the server
 * users run.
 */
export function missingCliNodeOptions(execArgv: readonly string[] = process.execArgv): string[] {
  return cliNodeOptions().filter((o) => !execArgv.includes(o))
}

/**
 * Runs this benchmark again in a child process with the Node options of `topograph start` ({@link
 * missingCliNodeOptions}) unless it has them, and exits with the child's status; returns only in a
 * process that has them, or when BENCH_CLI_NODE_OPTIONS=0 (Node's own young-generation sizing, as
 * before). Await it before the server starts. The options in effect, for the benchmark's output.
 *
 * `benchOptions` are Node options of the benchmark's own (e.g. V8's deoptimization log,
 * deopt-log.ts) that the process does not have yet: given any, it runs again with them too. With
 * `--log-deopt` V8 also prints every deoptimization to standard output (a `[bailout …` line); the
 * child's output is then passed on without those lines (the log has them).
 */
export async function runAsTheCli(benchOptions: readonly string[] = []): Promise<readonly string[]> {
  const own = process.env.BENCH_CLI_NODE_OPTIONS !== '0'
  const missing = own ? missingCliNodeOptions() : []
  if (missing.length === 0 && benchOptions.length === 0) return own ? cliNodeOptions() : []
  const filtered = benchOptions.includes('--log-deopt')
  const child = spawn(
    process.execPath,
    [...missing, ...benchOptions, ...process.execArgv, ...process.argv.slice(1)],
    { stdio: ['inherit', filtered ? 'pipe' : 'inherit', 'inherit'] },
  )
  if (filtered && child.stdout !== null) {
    let partial = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n')
      partial = lines.pop() ?? ''
      const kept = lines.filter((l) => !l.startsWith('[bailout'))
      if (kept.length > 0) process.stdout.write(`${kept.join('\n')}\n`)
    })
    child.stdout.on('end', () => {
      if (partial !== '' && !partial.startsWith('[bailout')) process.stdout.write(partial)
    })
  }
  // Ctrl-C reaches the child through the terminal's process group; a SIGTERM sent to this process
  // alone is passed on.
  process.on('SIGTERM', () => child.kill('SIGTERM'))
  const code = await new Promise<number>((resolve) =>
    child.on('close', (status, signal) => resolve(status ?? (signal === null ? 1 : 128))),
  )
  process.exit(code)
}
