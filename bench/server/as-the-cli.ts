// The servers' process of a benchmark that runs Topograph servers in its own process (requests.ts),
// with the Node options `topograph start` runs the server with (the CLI's `#!` line: the young
// generation fixed at two 16 MB semi-spaces, README "Node options"). Imported first: when this
// process was started without them, it runs the same command again in a child process with them
// and exits with the child's status, before anything else of the benchmark is loaded.
// BENCH_CLI_NODE_OPTIONS=0 runs on with Node's own young-generation sizing, as before.
//
// Without them V8 sizes the young generation itself, starting it small, growing it under load and
// shrinking it when the allocation rate drops: the servers ran with a heap no deployment has. The
// load process is not affected (load.ts gives it its own options).
import { spawn } from 'node:child_process'
import { cliNodeOptions } from '../../test/helpers/topograph-process.js'

const wanted = cliNodeOptions()
const missing = wanted.filter((o) => !process.execArgv.includes(o))
if (process.env.BENCH_CLI_NODE_OPTIONS !== '0' && missing.length > 0) {
  const child = spawn(process.execPath, [...missing, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
  })
  // Signals to this process (Ctrl-C) reach the child through the terminal's process group; a
  // SIGTERM sent to this process alone is passed on.
  process.on('SIGTERM', () => child.kill('SIGTERM'))
  const code = await new Promise<number>((resolve) =>
    child.on('exit', (status, signal) => resolve(status ?? (signal === null ? 1 : 128))),
  )
  process.exit(code)
}

/** The Node options this process runs with from the CLI's `#!` line, for a benchmark's output. */
export const cliOptionsInEffect: readonly string[] =
  process.env.BENCH_CLI_NODE_OPTIONS === '0' ? [] : wanted.filter((o) => process.execArgv.includes(o))
