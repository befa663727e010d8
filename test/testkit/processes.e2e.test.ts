// The test helpers that start servers: a failure message carries the last line a process printed
// before it exited, and a port chosen for a server that must restart on it is not one the kernel
// hands to outgoing connections.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ManagedProcess } from '../helpers/interop.js'
import { ephemeralPortsFrom, freeLoopbackPort } from '../helpers/topograph-process.js'

describe('ManagedProcess.waitFor', () => {
  it('rejects with everything the process printed, its last line included', async () => {
    // The process exits first; output it left in the pipe (here: written by a process it started,
    // which shares its stdout and stderr) arrives after the exit, in two reads.
    const late = [
      "setTimeout(() => { process.stdout.write('loading shard 49\\n');",
      "setTimeout(() => process.stderr.write('start-up failed: listen EADDRINUSE\\n'), 200) }, 200)",
    ].join(' ')
    const script = `
      require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(late)}], { stdio: 'inherit' }).unref()
      process.exit(1)
    `
    for (let run = 0; run < 2; run++) {
      const p = new ManagedProcess('printer', process.execPath, ['-e', script])
      const e = await p.waitFor(/never printed/, 30_000, { stream: 'all' }).then(
        () => assert.fail('resolved'),
        (err: unknown) => err as Error,
      )
      assert.match(e.message, /exited \(code 1, signal null\)/)
      assert.match(e.message, /loading shard 49/)
      assert.match(e.message, /start-up failed: listen EADDRINUSE/)
    }
  })
})

describe('freeLoopbackPort', () => {
  it('gives a port below the ephemeral range, free to listen on', async () => {
    const high = ephemeralPortsFrom()
    const seen = new Set<number>()
    for (let i = 0; i < 20; i++) {
      const port = await freeLoopbackPort()
      assert.ok(port > 1024 && port < high, `${port} is not in 1025..${high - 1}`)
      seen.add(port)
    }
    assert.ok(seen.size > 1, 'always the same port')
  })
})
