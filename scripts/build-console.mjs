// Bundles the console UI (src/console/ui) into dist/console/: index.html, app.js, app.css.
// `node scripts/build-console.mjs [--watch]`. The server serves dist/console/ when present and
// otherwise builds the same bundle in memory (src/console/assets.ts uses the same options).
import { copyFile, mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outdir = join(root, 'dist', 'console')
const watch = process.argv.includes('--watch')

await mkdir(outdir, { recursive: true })
await copyFile(join(root, 'src/console/ui/index.html'), join(outdir, 'index.html'))
await copyFile(join(root, 'src/console/ui/style.css'), join(outdir, 'app.css'))

const options = {
  absWorkingDir: root,
  entryPoints: ['src/console/ui/main.ts'],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  outfile: join(outdir, 'app.js'),
  minify: !watch,
  sourcemap: watch ? 'inline' : false,
  legalComments: 'linked',
  logLevel: 'info',
}

if (watch) {
  const ctx = await esbuild.context(options)
  await ctx.watch()
} else {
  await esbuild.build(options)
}
