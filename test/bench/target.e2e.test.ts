// runAsTheCli (bench/server/target.ts) in a real process: a benchmark started without the Node
// options of the CLI's #! line runs again with them, as `topograph start` runs the server.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { cliNodeOptions } from '../helpers/topograph-process.js'

test("runAsTheCli: the benchmark runs again with the CLI's fixed young generation, its arguments and status kept", () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-run-as-cli-'))
  try {
    const script = join(dir, 'bench.mts')
    const target = pathToFileURL(join(import.meta.dirname, '../../bench/server/target.ts')).href
    writeFileSync(
      script,
      `import { getHeapSpaceStatistics } from 'node:v8'
       import { runAsTheCli } from '${target}'
       await runAsTheCli()
       const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size / 1048576
       console.log(JSON.stringify({ argv: process.argv.slice(2), newSpace }))
       process.exitCode = 3`,
    )
    const r = spawnSync(process.execPath, ['--import', 'tsx', script, 'a', 'b'], { encoding: 'utf8' })
    assert.equal(r.status, 3, r.stderr)
    const out = JSON.parse(r.stdout.trim()) as { argv: string[]; newSpace: number }
    assert.deepEqual(out.argv, ['a', 'b'])
    const semiSpaceMb = Number(
      (cliNodeOptions().find((o) => o.startsWith('--max-semi-space-size=')) as string).split('=')[1],
    )
    // Two semi-spaces of the fixed size from the start (V8's default starts at 1 MB a semi-space).
    assert.equal(out.newSpace, 2 * semiSpaceMb)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("runAsTheCli with a benchmark's own options: the run has them too, and V8's deoptimization lines stay out of its output", () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-run-as-cli-'))
  try {
    const script = join(dir, 'bench.mts')
    const log = join(dir, 'v8.log')
    const target = pathToFileURL(join(import.meta.dirname, '../../bench/server/target.ts')).href
    const deoptLog = pathToFileURL(join(import.meta.dirname, '../../bench/server/deopt-log.ts')).href
    writeFileSync(
      script,
      `import { runAsTheCli } from '${target}'
       import { DeoptLog, deoptLogOptions } from '${deoptLog}'
       await runAsTheCli(process.execArgv.includes('--log-deopt') ? [] : deoptLogOptions(${JSON.stringify(log)}))
       // A function optimized for one shape, then called with another: V8 deoptimizes it.
       const f = (o: { x: unknown }) => (o.x as number) + 1
       let s = 0
       for (let i = 0; i < 200_000; i++) s += f({ x: i })
       for (let i = 0; i < 1_000; i++) s += Number(f({ y: 1, x: 'a' } as { x: unknown }))
       console.log(JSON.stringify({ deopts: DeoptLog.ofThisProcess()?.take().total, s: s > 0 }))`,
    )
    const r = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    const lines = r.stdout.trim().split('\n')
    assert.equal(lines.length, 1, r.stdout)
    const out = JSON.parse(lines[0]) as { deopts: number }
    assert.ok(out.deopts > 0, r.stdout)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
