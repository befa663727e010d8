// A real `topograph start` child process (tsx, the CLI's own start-up and signal handling) for the
// end-to-end tests that stop or restart the server: its PLAINTEXT port, everything it printed, a
// graceful stop (SIGTERM, expecting exit status 0) and a kill that is safe to call in `finally`.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface TopographProcess {
  readonly child: ChildProcess
  readonly port: number
  /** Settles when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** stdout and stderr so far, interleaved. */
  output(): string
  /** SIGTERM, then waits for the exit (SIGKILL after `timeoutMs`); returns the exit. */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** SIGKILL unless already exited; for `finally` blocks. */
  kill(): Promise<void>
}

/**
 * The Node options of the CLI's `#!` line (src/cli/topograph.ts): what `topograph start` runs with
 * when started as the installed command or by `npm start` (the young generation's fixed size), for
 * a process that starts the sources through tsx and should run as the product does.
 */
export function cliNodeOptions(): string[] {
  const first = readFileSync(join(import.meta.dirname, '../../src/cli/topograph.ts'), 'utf8').split(
    '\n',
    1,
  )[0]
  const m = /^#!.* node( .*)?$/.exec(first)
  if (m === null) throw new Error(`src/cli/topograph.ts does not start with a #! line running node: ${first}`)
  return (m[1] ?? '').split(' ').filter((o) => o !== '')
}

/**
 * The first port the kernel hands out as the local port of an outgoing connection (or of a listen
 * on port 0): Linux's ip_local_port_range, else the IANA dynamic range.
 */
export function ephemeralPortsFrom(): number {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    )
    if (Number.isInteger(first) && first > 1024) return first
  } catch {
    // not Linux
  }
  return 49152
}

/**
 * A loopback port that was free a moment ago, for a server that must come back on the same port.
 * It lies below the ephemeral range: a port from there (a listen on port 0) is also what the kernel
 * gives the next outgoing connection of any process, which then holds it while the server starts;
 * below it only another listener can take the port.
 */
export async function freeLoopbackPort(): Promise<number> {
  const high = ephemeralPortsFrom()
  const low = Math.max(1025, Math.min(10_000, high - 5_000))
  for (let attempt = 0; ; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low))
    const s = createServer()
    try {
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject)
        s.listen(port, '127.0.0.1', () => resolve())
      })
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < 100) continue
      throw e
    }
    await new Promise<void>((resolve) => s.close(() => resolve()))
    return port
  }
}

/**
 * Starts `topograph start` with every entry of `settings` as an `--override`. `listeners` defaults to
 * an ephemeral loopback port, `console.listener` to none, and `data.dir` to a fresh directory of
 * its own, removed once the process has exited (the product's default, `./data`, would be shared by
 * every test running at the same time). Resolves once the listener is up;
 * rejects (with the output so far) when the process exits first or `startTimeoutMs` passes.
 */
/** The processes started here that have not exited yet. */
const live = new Set<ChildProcess>()

/**
 * Sends `signal` to every process started here that has not exited, and returns how many there
 * were: for a long-running tool (tools/soak/main.ts) stopped by a signal, whose own exit would
 * otherwise leave its server running.
 */
export function signalLiveTopographProcesses(signal: NodeJS.Signals = 'SIGTERM'): number {
  for (const child of live) child.kill(signal)
  return live.size
}

export async function startTopographProcess(
  settings: Readonly<Record<string, string>>,
  options: {
    readonly startTimeoutMs?: number
    /** Node arguments before `start`: the CLI's entry point (default: the sources through tsx). */
    readonly entry?: readonly string[]
    /** Node options before the entry point (after `--import tsx` with the default entry). */
    readonly nodeArgs?: readonly string[]
    /** Extra environment variables for the process. */
    readonly env?: Readonly<Record<string, string>>
  } = {},
): Promise<TopographProcess> {
  const ownDataDir =
    settings['data.dir'] === undefined ? mkdtempSync(join(tmpdir(), 'topograph-process-')) : undefined
  const all: Record<string, string> = {
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'console.listener': 'none',
    ...(ownDataDir === undefined ? {} : { 'data.dir': ownDataDir }),
    ...settings,
  }
  const nodeArgs = options.nodeArgs ?? []
  const args =
    options.entry === undefined
      ? ['--import', 'tsx', ...nodeArgs, 'src/cli/topograph.ts', 'start']
      : [...nodeArgs, ...options.entry, 'start']
  for (const [k, v] of Object.entries(all)) args.push('--override', `${k}=${v}`)
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...(options.env ?? {}) },
  })
  live.add(child)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // 'close', not 'exit': the output is then read to its end, for the failure messages
    child.once('close', (code, signal) => {
      live.delete(child)
      if (ownDataDir !== undefined) rmSync(ownDataDir, { recursive: true, force: true })
      resolve({ code, signal })
    }),
  )
  let out = ''
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString()
  })
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString()
  })
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  }
  const timeoutMs = options.startTimeoutMs ?? 90_000
  let timer: NodeJS.Timeout | undefined
  let poll: NodeJS.Timeout | undefined
  try {
    const port = await new Promise<number>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no listening line within ${timeoutMs} ms:\n${out}`)),
        timeoutMs,
      )
      poll = setInterval(() => {
        const m = /Listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/.exec(out)
        if (m) resolve(Number(m[1]))
      }, 10)
      exited.then(({ code, signal }) =>
        reject(
          new Error(`topograph start exited (code ${code}, signal ${signal}) before listening:\n${out}`),
        ),
      )
    })
    return {
      child,
      port,
      exited,
      output: () => out,
      async stop(stopTimeoutMs = 20_000) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
        const t = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs)
        try {
          return await exited
        } finally {
          clearTimeout(t)
        }
      },
      kill,
    }
  } catch (e) {
    await kill()
    throw e
  } finally {
    clearTimeout(timer)
    clearInterval(poll)
  }
}
