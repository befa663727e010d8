/**
 * The UI bundle: index.html, app.js and app.css. Served from dist/console/ when
 * `node scripts/build-console.mjs` has built it; otherwise built once in memory with esbuild from
 * src/console/ui/ (development and tests), which needs the esbuild dev dependency.
 */
import { existsSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface ConsoleAssets {
  readonly 'index.html': string
  readonly 'app.js': string
  readonly 'app.css': string
  /** where they came from: `dist/console` or `built from src/console/ui` */
  readonly origin: string
}

export const ASSET_NAMES = ['index.html', 'app.js', 'app.css'] as const

/** The directory of the topograph package (works from src/ and from dist/src/). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const pkg = join(dir, 'package.json')
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === 'topograph') return dir
      } catch {
        // not ours; keep walking up
      }
    }
    const parent = dirname(dir)
    if (parent === dir) throw new Error('Cannot find the topograph package directory')
    dir = parent
  }
}

/** Bundling options shared with scripts/build-console.mjs (keep the two in step). */
export const UI_ENTRY = 'src/console/ui/main.ts'

async function readBuilt(dir: string): Promise<ConsoleAssets | null> {
  if (!ASSET_NAMES.every((n) => existsSync(join(dir, n)))) return null
  const [html, js, css] = await Promise.all(ASSET_NAMES.map((n) => readFile(join(dir, n), 'utf8')))
  return { 'index.html': html!, 'app.js': js!, 'app.css': css!, origin: 'dist/console' }
}

interface EsbuildLike {
  build(opts: Record<string, unknown>): Promise<{ outputFiles?: Array<{ path: string; text: string }> }>
}

async function buildInMemory(root: string): Promise<ConsoleAssets> {
  let esbuild: EsbuildLike
  try {
    // A computed specifier: esbuild is a dev dependency and absent from production installs.
    const name = 'esbuild'
    esbuild = (await import(name)) as EsbuildLike
  } catch (e) {
    throw new Error('The console bundle is missing: run `node scripts/build-console.mjs` (needs esbuild).', {
      cause: e,
    })
  }
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [UI_ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    outdir: 'out',
    entryNames: 'app',
    logLevel: 'silent',
  })
  const file = (ext: string): string => {
    const f = result.outputFiles?.find((o) => o.path.endsWith(ext))
    if (f === undefined) throw new Error(`esbuild produced no ${ext} file`)
    return f.text
  }
  const html = await readFile(join(root, 'src/console/ui/index.html'), 'utf8')
  const css = await readFile(join(root, 'src/console/ui/style.css'), 'utf8')
  return { 'index.html': html, 'app.js': file('.js'), 'app.css': css, origin: 'built from src/console/ui' }
}

let inMemory: Promise<ConsoleAssets> | null = null

/**
 * The bundle from dist/console/, or built once per process from the sources. `fromSource` skips
 * dist/console/ (tests use it so that a stale build cannot hide a change).
 */
export async function loadConsoleAssets(
  opts: { readonly fromSource?: boolean } = {},
): Promise<ConsoleAssets> {
  const root = packageRoot()
  if (opts.fromSource !== true) {
    const built = await readBuilt(join(root, 'dist', 'console'))
    if (built !== null) return built
  }
  if (inMemory === null) {
    inMemory = buildInMemory(root)
    // A failed build may succeed later (sources fixed, esbuild installed).
    inMemory.catch(() => {
      inMemory = null
    })
  }
  return inMemory
}
