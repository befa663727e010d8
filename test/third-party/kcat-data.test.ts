// kcat (librdkafka) produces to the server (creating the topic through Metadata, with each codec
// librdkafka ships) and consumes every record back exactly, keys included.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { startTestServer, type TestServer } from '../server/harness.js'

const run = promisify(execFile)
let ts: TestServer
before(async () => {
  ts = await startTestServer()
})
after(async () => {
  await ts.stop()
})

/** Runs kcat with `input` on its standard input. */
function kcatWithInput(args: string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', args, { stdio: ['pipe', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => {
      stderr += String(d)
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else reject(new Error(`kcat exited ${code}: ${stderr}`))
    })
    child.stdin.end(input)
  })
}

test('kcat produces with every codec and consumes exactly what was produced', {
  timeout: 90_000,
}, async () => {
  const broker = `127.0.0.1:${ts.port}`
  const expected: string[] = []
  for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
    const lines = [0, 1, 2].map((i) => `${codec}-k${i}:${codec}-value-${i}-${'z'.repeat(i * 40)}`)
    await kcatWithInput(['-P', '-b', broker, '-t', 'kcat-data', '-K:', '-z', codec], `${lines.join('\n')}\n`)
    expected.push(...lines)
  }
  const { stdout } = await run(
    'kcat',
    ['-C', '-b', broker, '-t', 'kcat-data', '-o', 'beginning', '-e', '-q', '-f', '%o %k:%s\\n'],
    { timeout: 30_000 },
  )
  assert.deepEqual(
    stdout.trim().split('\n'),
    expected.map((line, offset) => `${offset} ${line}`),
  )
})
