// The build of the server the benchmarks start: the TypeScript sources through tsx (the default),
// or the compiled package in dist/ with `TOPOGRAPH_BENCH_BUILD=dist` (run `npm run build` first).
// tsx keeps function names by wrapping closures in a helper, which costs several per cent on the
// request path; the compiled build is what a deployment runs. The benchmark scripts themselves and
// the load generator stay TypeScript either way.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type * as ConfigModule from '../../src/server/config.js'
import type * as LoggerModule from '../../src/server/logger.js'
import type * as ServerModule from '../../src/server/server.js'

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
