// `topograph console` and `topograph demo` as modules (src/cli/console-command.ts, src/cli/demo.ts):
// argument handling, and a console run against a real server stopped by a signal; the URL
// `topograph start` announces for its own console.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { parseConsoleArgs, runConsoleCommand } from '../../src/cli/console-command.js'
import { runDemo } from '../../src/cli/demo.js'
import { createLogger } from '../../src/server/logger.js'
import { startTestServer, type TestServer } from '../server/harness.js'

function io() {
  const out: string[] = []
  const err: string[] = []
  let handler: ((signal: string) => void) | null = null
  return {
    out,
    err,
    stop: () => handler?.('SIGTERM'),
    io: {
      stdout: (t: string) => void out.push(t),
      stderr: (t: string) => void err.push(t),
      onStopSignal: (h: (signal: string) => void) => {
        handler = h
        return () => {
          handler = null
        }
      },
    },
  }
}

describe('parseConsoleArgs', () => {
  it('takes the bootstrap list and the listener in both option forms', () => {
    assert.deepEqual(
      parseConsoleArgs(['--bootstrap-server', 'a:9092, b:9093', '--listener=http://127.0.0.1:0']),
      {
        bootstrapServers: ['a:9092', 'b:9093'],
        listener: { host: '127.0.0.1', port: 0 },
      },
    )
    assert.deepEqual(parseConsoleArgs(['--bootstrap-server=a:1', '--listener', 'http://[::1]:8081/']), {
      bootstrapServers: ['a:1'],
      listener: { host: '::1', port: 8081 },
    })
    assert.deepEqual(parseConsoleArgs(['--bootstrap-server', 'a:1']), {
      bootstrapServers: ['a:1'],
      listener: { host: 'localhost', port: 8080 },
    })
  })

  it('reports what is wrong', () => {
    assert.equal(parseConsoleArgs([]), '--bootstrap-server is required')
    assert.equal(parseConsoleArgs(['--bootstrap-server']), '--bootstrap-server needs a value')
    assert.equal(parseConsoleArgs(['--nope']), "unknown option '--nope' for console")
    assert.equal(
      parseConsoleArgs(['--bootstrap-server', 'a:1', '--listener', 'https://x:1']),
      "--listener 'https://x:1' is not of the form http://host:port",
    )
    assert.equal(parseConsoleArgs(['-h']), 'help')
  })
})

describe('topograph console', () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer({ 'coordinator.storage': 'memory' })
  })
  after(async () => {
    await server?.stop()
  })

  it('exits 2 with the usage for a bad command line', async () => {
    const t = io()
    assert.equal(await runConsoleCommand(['--listener', 'http://127.0.0.1:0'], t.io), 2)
    assert.match(t.err.join(''), /--bootstrap-server is required[\s\S]*Usage: topograph console/)
  })

  it('serves the API for the cluster until a stop signal, then exits 0', async () => {
    const t = io()
    const exit = runConsoleCommand(
      ['--bootstrap-server', `127.0.0.1:${server.port}`, '--listener', 'http://127.0.0.1:0'],
      t.io,
    )
    const end = Date.now() + 10_000
    while (!t.out.join('').includes('at http://')) {
      assert.ok(Date.now() < end, 'the console did not start')
      await new Promise((r) => setTimeout(r, 20))
    }
    const url = /at (http:\/\/\S+)/.exec(t.out.join(''))![1]!
    try {
      const res = await fetch(`${url}/api/groups`, { signal: AbortSignal.timeout(10_000) })
      assert.equal(res.status, 200)
      assert.deepEqual((await res.json()).groups, [])
    } finally {
      t.stop()
    }
    assert.equal(await exit, 0)
    await assert.rejects(fetch(`${url}/api/groups`, { signal: AbortSignal.timeout(2000) }))
  })

  // A listener given as `localhost` is announced as `localhost` (what the user would paste into a
  // browser), not as the address the name resolved to.
  it('prints its URL with the listener host as given', async () => {
    let stop = null as ((signal: string) => void) | null
    const err: string[] = []
    let printed!: (text: string) => void
    const announced = new Promise<string>((resolve) => (printed = resolve))
    const exit = runConsoleCommand(
      ['--bootstrap-server', `127.0.0.1:${server.port}`, '--listener', 'http://localhost:0'],
      {
        stdout: (text) => printed(text),
        stderr: (text) => void err.push(text),
        onStopSignal: (h) => {
          stop = h
          return () => {
            stop = null
          }
        },
      },
    )
    const text = await Promise.race([announced, exit.then((code) => `exit ${code}: ${err.join('')}`)])
    try {
      assert.match(text, /^Console for 127\.0\.0\.1:\d+ at http:\/\/localhost:\d+\n$/)
      const url = /at (http:\/\/\S+)/.exec(text)![1]!
      const res = await fetch(`${url}/api/groups`, { signal: AbortSignal.timeout(10_000) })
      assert.equal(res.status, 200)
    } finally {
      stop?.('SIGTERM')
    }
    assert.equal(await exit, 0)
  })

  it('exits 1 when the listener cannot be opened', async () => {
    const t = io()
    const code = await runConsoleCommand(
      ['--bootstrap-server', `127.0.0.1:${server.port}`, '--listener', `http://127.0.0.1:${server.port}`],
      t.io,
    )
    assert.equal(code, 1)
    assert.match(t.err.join(''), /Cannot listen on http:\/\/127.0.0.1:\d+: .*EADDRINUSE/)
  })
})

describe('topograph start', () => {
  // The server's console, on console.listener, is announced as the console command announces it.
  it("logs the console's URL with the console.listener host as given", async () => {
    const lines: string[] = []
    const started = await startTestServer(
      { 'coordinator.storage': 'memory', 'console.listener': 'http://localhost:0' },
      { logger: createLogger({ level: 'info', destination: { write: (line) => void lines.push(line) } }) },
    )
    try {
      const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg)
      const announced = messages.filter((m) => m.startsWith('Console listening on '))
      assert.equal(announced.length, 1, messages.join('\n'))
      assert.match(announced[0]!, /^Console listening on http:\/\/localhost:\d+$/)
    } finally {
      await started.stop()
    }
  })
})

describe('topograph demo', () => {
  it('exits 2 with the usage for a bad command line, 0 for --help', async () => {
    const t = io()
    assert.equal(await runDemo(['--instances', '0'], t.io), 2)
    assert.match(t.err.join(''), /--instances must be an integer from 1 to 16, got '0'/)
    const h = io()
    assert.equal(await runDemo(['--help'], h.io), 0)
    assert.match(h.out.join(''), /Usage: topograph demo/)
  })

  it('runs both applications against a server until a stop signal, then leaves', async () => {
    const server = await startTestServer({
      'coordinator.storage': 'memory',
      'group.streams.initial.rebalance.delay.ms': '0',
    })
    const t = io()
    try {
      const exit = runDemo(['--bootstrap-server', `127.0.0.1:${server.port}`, '--instances', '1'], t.io)
      const end = Date.now() + 15_000
      while (!t.out.join('').includes('Demo running')) {
        assert.ok(Date.now() < end, `the demo did not start: ${t.err.join('')}`)
        await new Promise((r) => setTimeout(r, 20))
      }
      assert.match(t.out.join(''), /demo-orders: member 1 joined/)
      assert.match(t.out.join(''), /demo-inventory: member 1 joined/)
      t.stop()
      assert.equal(await exit, 0)
      assert.match(t.out.join(''), /every member left its group/)
    } finally {
      await server.stop()
    }
  })
})
