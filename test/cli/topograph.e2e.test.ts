import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { type CliIo, main, type RunningServer, type ServerModule } from '../../src/cli/topograph.js'
import type { TopographConfig } from '../../src/server/config.js'
import { createLogger } from '../../src/server/logger.js'
import { runTopograph as runCli } from '../testkit/cli.js'

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string
  bin: Record<string, string>
}

describe('topograph as a child process', () => {
  it("the build leaves the package's commands executable: each runs by its #! line", () => {
    // The test command builds before the e2e tier runs.
    for (const [name, file] of Object.entries(pkg.bin)) {
      const path = fileURLToPath(new URL(`../../${file}`, import.meta.url))
      assert.equal(statSync(path).mode & 0o111, 0o111, `${name}: ${file} is not executable`)
      // Run as a program, not through node: the kernel follows the #! line.
      const r = spawnSync(path, ['--help'], { encoding: 'utf8' })
      assert.equal(r.error, undefined, `${name}: ${r.error}`)
      assert.match(r.stdout + r.stderr, /--help/, name)
    }
  })

  it('each command runs through a symlink, as npm installs it in node_modules/.bin', () => {
    const bin = mkdtempSync(join(tmpdir(), 'topograph-bin-'))
    try {
      for (const [name, file] of Object.entries(pkg.bin)) {
        const link = join(bin, name)
        symlinkSync(fileURLToPath(new URL(`../../${file}`, import.meta.url)), link)
        const r = spawnSync(link, ['--help'], { encoding: 'utf8' })
        assert.equal(r.error, undefined, `${name}: ${r.error}`)
        assert.match(r.stdout + r.stderr, /--help/, `${name} through ${link} printed nothing`)
      }
    } finally {
      rmSync(bin, { recursive: true, force: true })
    }
  })

  it('--help prints the usage and exits 0', () => {
    const r = runCli(['--help'])
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /^Usage: topograph <command>/)
    assert.match(r.stdout, /--override key=value/)
  })

  it('--version prints the package version', () => {
    const r = runCli(['--version'])
    assert.equal(r.status, 0, r.stderr)
    assert.equal(r.stdout, `${pkg.version}\n`)
  })

  it('an unknown subcommand prints the usage and exits 2', () => {
    const r = runCli(['serve'])
    assert.equal(r.status, 2)
    assert.match(r.stderr, /^topograph: unknown command 'serve'\n\nUsage: topograph/)
  })

  it('a malformed --override exits 2', () => {
    const r = runCli(['start', '--override', 'node.id'])
    assert.equal(r.status, 2)
    assert.match(r.stderr, /--override 'node.id' is not of the form key=value/)
  })

  it('a bad configuration value exits 1 naming the key', () => {
    const r = runCli(['start', '--override', 'group.streams.num.standby.replicas=-1'])
    assert.equal(r.status, 1)
    assert.equal(
      r.stderr,
      'topograph: Invalid value -1 for configuration group.streams.num.standby.replicas: Value must be at least 0\n',
    )
    assert.equal(r.stdout, '', 'nothing is logged before the configuration is valid')
  })

  it('a bad value from the environment exits 1 naming the key', () => {
    const r = runCli(['start'], { TOPOGRAPH_GROUP_STREAMS_SESSION_TIMEOUT_MS: 'soon' })
    assert.equal(r.status, 1)
    assert.match(r.stderr, /Invalid value soon for configuration group\.streams\.session\.timeout\.ms/)
  })

  it('a missing config file exits 1', () => {
    const r = runCli(['start', '--config', 'no/such/file.properties'])
    assert.equal(r.status, 1)
    assert.match(r.stderr, /^topograph: Cannot read configuration file no\/such\/file\.properties: .*ENOENT/)
  })

  it('a shutdown that does not complete keeps the process up, says so, and a second signal ends it', async () => {
    // The stand-in server's close() never settles and holds nothing that keeps the event loop
    // alive (as a connection parked on a paused socket did once): the process must neither end on
    // its own mid-shutdown nor wait unseen.
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/cli-stuck-close.ts'], {
      cwd: new URL('../../', import.meta.url).pathname,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += String(d)))
    child.stderr.on('data', (d) => (err += String(d)))
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
    try {
      await waitFor(() => out.includes('Awaiting socket connections'), 30_000)
      child.kill('SIGTERM')
      await waitFor(() => out.includes('Shutdown still in progress'), 10_000)
      assert.equal(child.exitCode, null, `exited on its own: ${err}`)
      child.kill('SIGTERM')
      assert.equal(await exited, 1)
      assert.match(err, /stopped by a second SIGTERM before shutdown completed/)
    } finally {
      child.kill('SIGKILL')
    }
  })
})

// In-process runs of main() with a stand-in server module, to check the start/stop sequence.

interface Harness {
  io: CliIo
  stdout: string[]
  stderr: string[]
  logLines: () => Record<string, unknown>[]
  events: string[]
  signal: (name: string) => void
  forcedExit: number[]
}

function harness(server: Partial<ServerModule> & { closeError?: Error; startError?: Error } = {}): Harness {
  const stdout: string[] = []
  const stderr: string[] = []
  const log: string[] = []
  const events: string[] = []
  const forcedExit: number[] = []
  let handler: ((s: string) => void) | null = null
  const sink = new Writable({
    write(chunk, _e, cb) {
      log.push(String(chunk))
      cb()
    },
  })
  const fake: ServerModule = {
    startServer:
      server.startServer ??
      (async (config: TopographConfig): Promise<RunningServer> => {
        events.push(`start node=${config.nodeId}`)
        if (server.startError) throw server.startError
        return {
          address: { host: '127.0.0.1', port: 45678 },
          close: async () => {
            events.push('close')
            if (server.closeError) throw server.closeError
          },
        }
      }),
  }
  return {
    stdout,
    stderr,
    events,
    forcedExit,
    logLines: () =>
      log
        .join('')
        .split('\n')
        .filter((l) => l)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    signal: (name) => handler?.(name),
    io: {
      env: {},
      stdout: (t) => void stdout.push(t),
      stderr: (t) => void stderr.push(t),
      loadServer: async () => fake,
      onStopSignal: (h) => {
        handler = h
        return () => {
          handler = null
          events.push('signal handler removed')
        }
      },
      createLogger: (config) => createLogger({ level: config.logLevel, destination: sink }),
      forceExit: (code) => void forcedExit.push(code),
    },
  }
}

async function waitFor(cond: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  assert.ok(cond(), 'condition not reached')
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 2))
  assert.ok(cond(), 'condition not reached')
}

describe('topograph start in-process', () => {
  it('starts, logs the bound address, and closes on SIGTERM with status 0', async () => {
    const h = harness()
    const done = main(['start', '--override', 'node.id=4', '--override', 'plugin.flavour=x'], h.io)
    await until(() => h.logLines().some((l) => String(l.msg).startsWith('Awaiting socket connections')))
    assert.deepEqual(h.events, ['start node=4'])
    h.signal('SIGTERM')
    assert.equal(await done, 0)
    assert.deepEqual(h.events, ['start node=4', 'close', 'signal handler removed'])
    const lines = h.logLines()
    const bound = lines.find((l) => l.msg === 'Awaiting socket connections on 127.0.0.1:45678.')
    assert.ok(bound)
    assert.equal(bound.port, 45678)
    assert.equal(bound.host, '127.0.0.1')
    const warns = lines.filter((l) => l.level === 'warn')
    assert.deepEqual(
      warns.map((l) => l.key),
      ['plugin.flavour'],
    )
    assert.deepEqual(h.stderr, [])
  })

  it('a stop signal during start-up closes the server as soon as it is up', async () => {
    let release: () => void = () => {}
    const h = harness({
      startServer: async () => {
        await new Promise<void>((r) => (release = r))
        return { address: { host: 'localhost', port: 1 }, close: async () => void h.events.push('close') }
      },
    })
    const done = main(['start'], h.io)
    await until(() => h.logLines().some((l) => l.msg === 'TopographConfig values'))
    h.signal('SIGINT')
    release()
    assert.equal(await done, 0)
    assert.ok(h.events.includes('close'))
  })

  it('a start-up failure exits 1 with the cause on stderr', async () => {
    const cause = new Error('Cannot find module ./nope.js')
    const h = harness({
      startError: new Error(
        'Invalid value ./nope.js for configuration group.streams.topology.description.plugin.class: module cannot be loaded',
        { cause },
      ),
    })
    assert.equal(await main(['start'], h.io), 1)
    assert.equal(
      h.stderr.join(''),
      'topograph: start-up failed: Invalid value ./nope.js for configuration group.streams.topology.description.plugin.class: module cannot be loaded\n' +
        '  caused by: Cannot find module ./nope.js\n',
    )
    assert.ok(h.events.includes('signal handler removed'))
  })

  it('a cause whose text the message already gives is not printed again', async () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:35999')
    const h = harness({
      startError: new Error(
        'cannot open the PostgreSQL coordinator storage at postgres://u@127.0.0.1:35999/x: connect ECONNREFUSED 127.0.0.1:35999',
        { cause },
      ),
    })
    assert.equal(await main(['start'], h.io), 1)
    assert.equal(
      h.stderr.join(''),
      'topograph: start-up failed: cannot open the PostgreSQL coordinator storage at postgres://u@127.0.0.1:35999/x: connect ECONNREFUSED 127.0.0.1:35999\n',
    )
  })

  it('a failing close exits 1', async () => {
    const h = harness({ closeError: new Error('storage flush failed') })
    const done = main(['start'], h.io)
    await until(() => h.events.includes('start node=1') && h.logLines().some((l) => l.port === 45678))
    h.signal('SIGTERM')
    assert.equal(await done, 1)
    assert.match(h.stderr.join(''), /shutdown failed: storage flush failed/)
  })

  it('a second signal during shutdown forces exit 1', async () => {
    let finishClose: (() => void) | null = null
    const h = harness({
      startServer: async () => ({
        address: { host: 'localhost', port: 2 },
        close: () => new Promise<void>((r) => (finishClose = r)),
      }),
    })
    const done = main(['start'], h.io)
    await until(() => h.logLines().some((l) => l.port === 2))
    h.signal('SIGTERM')
    h.signal('SIGINT')
    assert.deepEqual(h.forcedExit, [1])
    await until(() => finishClose !== null)
    finishClose!()
    assert.equal(await done, 0)
  })

  it('does not load the server when the configuration is invalid', async () => {
    const h = harness()
    assert.equal(await main(['start', '--override', 'listeners=nonsense'], h.io), 1)
    assert.deepEqual(h.events, [])
    assert.match(
      h.stderr.join(''),
      /configuration listeners: 'nonsense' is not of the form NAME:\/\/host:port/,
    )
  })
})
