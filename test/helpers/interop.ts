// The interop tests' harness: a real Topograph server process on a throwaway data directory, child
// processes that are always cleaned up, and Kafka's own Java clients and tools from kafka-java
// (../shared/kafka-java, or KAFKA_JAVA_DIR): launchers in bin/, single-file test programs under
// test/interop/java/ compiled once per source version, and a JSON-lines driver (ClientDriver.java) that
// runs Kafka's producer, consumer and Admin client in one JVM per test file.
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Admin } from '../../src/clients/admin/index.js'
import { NetworkClient } from '../../src/clients/network/client.js'
import { readBatchHeader, splitBatches } from '../../src/log/batch.js'
import { freeLoopbackPort } from './topograph-process.js'

// --- child processes ------------------------------------------------------------------------------

type Exit = { code: number | null; signal: NodeJS.Signals | null }

const live = new Set<ManagedProcess>()
process.once('exit', () => {
  for (const p of live) p.child.kill('SIGKILL')
})

/**
 * A child process whose output is kept and searched (readiness is a line it prints, never a sleep),
 * tracked until it exits so that `killAll` (and, last, the test process's exit) ends it.
 */
export class ManagedProcess {
  readonly child: ChildProcess
  readonly exited: Promise<Exit>
  readonly name: string
  #stdout = ''
  #stderr = ''
  #all = ''
  #waiters = new Set<() => void>()
  /** Exited, and its stdout and stderr read to the end ('exit' can come before the last output). */
  #closed = false

  constructor(name: string, command: string, args: readonly string[], options: SpawnOptions = {}) {
    this.name = name
    this.child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    live.add(this)
    this.exited = new Promise<Exit>((res) =>
      this.child.once('close', (code, signal) => {
        this.#closed = true
        live.delete(this)
        res({ code, signal })
        this.#wake()
      }),
    )
    this.child.on('error', (e) => {
      this.#stderr += `spawn error: ${e.message}\n`
      this.#all += `spawn error: ${e.message}\n`
    })
    this.child.stdout!.on('data', (d: Buffer) => {
      this.#stdout += d.toString()
      this.#all += d.toString()
      this.#wake()
    })
    this.child.stderr!.on('data', (d: Buffer) => {
      this.#stderr += d.toString()
      this.#all += d.toString()
      this.#wake()
    })
    this.child.stdin!.on('error', () => undefined)
    if (options.input !== undefined) this.child.stdin!.end(options.input)
  }

  #wake(): void {
    for (const w of this.#waiters) w()
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }
  stdout(): string {
    return this.#stdout
  }
  stderr(): string {
    return this.#stderr
  }
  /** stdout and stderr, interleaved as they arrived. */
  output(): string {
    return this.#all
  }
  /** The last `chars` characters of the output, for failure messages. */
  tail(chars = 4000): string {
    return this.#all.length > chars ? `…${this.#all.slice(-chars)}` : this.#all
  }

  /**
   * Resolves with the first match of `re` in stdout (or in all output with `stream: 'all'`) at or after
   * character `from`; rejects when the process exits first or `timeoutMs` passes.
   */
  waitFor(
    re: RegExp,
    timeoutMs: number,
    opts: { readonly from?: number; readonly stream?: 'stdout' | 'all' } = {},
  ): Promise<RegExpExecArray> {
    return this.waitUntil(
      () => {
        const text = (opts.stream === 'all' ? this.#all : this.#stdout).slice(opts.from ?? 0)
        return re.exec(text) ?? undefined
      },
      timeoutMs,
      `${re}`,
    )
  }

  /** Resolves with the first defined value of `check`, re-run whenever output arrives. */
  waitUntil<T>(check: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise<T>((res, rej) => {
      const done = (): void => {
        clearTimeout(timer)
        this.#waiters.delete(poll)
      }
      const poll = (): void => {
        let v: T | undefined
        try {
          v = check()
        } catch (e) {
          done()
          rej(e)
          return
        }
        if (v !== undefined) {
          done()
          res(v)
        } else if (this.#closed) {
          done()
          rej(
            new Error(
              `${this.name} exited (code ${this.child.exitCode}, signal ${this.child.signalCode}) before ${what}:\n${this.tail()}`,
            ),
          )
        }
      }
      const timer = setTimeout(() => {
        done()
        rej(new Error(`${this.name}: no ${what} within ${timeoutMs} ms:\n${this.tail()}`))
      }, timeoutMs)
      this.#waiters.add(poll)
      poll()
    })
  }

  write(text: string): void {
    this.child.stdin!.write(text)
  }

  /** SIGTERM, then SIGKILL after `timeoutMs`; resolves with the exit. */
  async stop(timeoutMs = 30_000): Promise<Exit> {
    if (this.running) this.child.kill('SIGTERM')
    const t = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs)
    try {
      return await this.exited
    } finally {
      clearTimeout(t)
    }
  }

  /** SIGKILL unless already exited. */
  async kill(): Promise<Exit> {
    if (this.running) this.child.kill('SIGKILL')
    return this.exited
  }
}

export interface SpawnOptions {
  readonly cwd?: string
  readonly env?: Readonly<Record<string, string>>
  /** written to stdin, which is then closed */
  readonly input?: string
}

/** Kills every process this harness started that is still running (for `after` hooks). */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.kill()))
}

export interface RunResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to its end (SIGKILL after `timeoutMs`, which then rejects). */
export async function run(
  command: string,
  args: readonly string[],
  options: SpawnOptions & { readonly timeoutMs?: number } = {},
): Promise<RunResult> {
  const p = new ManagedProcess(command, command, args, options)
  const timeoutMs = options.timeoutMs ?? 120_000
  let timedOut = false
  const t = setTimeout(() => {
    timedOut = true
    p.child.kill('SIGKILL')
  }, timeoutMs)
  const exit = await p.exited
  clearTimeout(t)
  if (timedOut)
    throw new Error(`${command} ${args.join(' ')}: killed after ${timeoutMs} ms; output:\n${p.tail()}`)
  return { ...exit, stdout: p.stdout(), stderr: p.stderr() }
}

// --- the server -----------------------------------------------------------------------------------

/**
 * The checkout whose server the interop tests start: this one, or TOPOGRAPH_SERVER_DIR (another
 * checkout with node_modules, to run these tests against a server being worked on elsewhere).
 */
export const SERVER_DIR = resolve(process.env.TOPOGRAPH_SERVER_DIR ?? '.')

/**
 * Extra server settings for every interop server, from TOPOGRAPH_INTEROP_OVERRIDES
 * (`key=value,key=value`), to run the tier against another storage configuration.
 */
const EXTRA_SETTINGS: Readonly<Record<string, string>> = Object.fromEntries(
  (process.env.TOPOGRAPH_INTEROP_OVERRIDES ?? '')
    .split(',')
    .filter((kv) => kv.includes('='))
    .map((kv) => [kv.slice(0, kv.indexOf('=')).trim(), kv.slice(kv.indexOf('=') + 1).trim()]),
)

/** `topograph start` with `settings` as overrides; resolves once it logged its listener. */
async function startServerProcess(settings: Readonly<Record<string, string>>): Promise<ManagedProcess> {
  const args = ['--import', 'tsx', 'src/cli/topograph.ts', 'start']
  for (const [k, v] of Object.entries(settings)) args.push('--override', `${k}=${v}`)
  const proc = new ManagedProcess('topograph start', process.execPath, args, { cwd: SERVER_DIR })
  try {
    await proc.waitFor(/Listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/, 90_000, { stream: 'all' })
    return proc
  } catch (e) {
    await proc.kill()
    throw e
  }
}

/** A `topograph start` process on its own data directory, restartable on the same port. */
export class InteropServer {
  readonly dataDir: string
  readonly port: number
  readonly settings: Readonly<Record<string, string>>
  #proc: ManagedProcess
  #logs: string[] = []

  private constructor(
    dataDir: string,
    port: number,
    settings: Readonly<Record<string, string>>,
    proc: ManagedProcess,
  ) {
    this.dataDir = dataDir
    this.port = port
    this.settings = settings
    this.#proc = proc
  }

  /**
   * Starts a server with `settings` as overrides, on a free loopback port and a new data directory.
   * `extraListeners` (e.g. `['SASL_PLAINTEXT']`) adds listeners of those names, each on a free
   * loopback port of its own ({@link listenerPort}); their other settings come from `settings`.
   */
  static async start(
    settings: Readonly<Record<string, string>> = {},
    options: { readonly extraListeners?: readonly string[] } = {},
  ): Promise<InteropServer> {
    const dataDir = mkdtempSync(join(tmpdir(), 'topograph-interop-'))
    try {
      // Another test's listener can take the port between the probe and the server's own bind:
      // then the server exits with EADDRINUSE, and another port is tried.
      for (let attempt = 1; ; attempt++) {
        const port = await freeLoopbackPort()
        const listeners = [`PLAINTEXT://127.0.0.1:${port}`]
        for (const name of options.extraListeners ?? []) {
          listeners.push(`${name}://127.0.0.1:${await freeLoopbackPort()}`)
        }
        const all = {
          listeners: listeners.join(','),
          'console.listener': 'none',
          'data.dir': dataDir,
          ...settings,
          ...EXTRA_SETTINGS,
        }
        try {
          return new InteropServer(dataDir, port, all, await startServerProcess(all))
        } catch (e) {
          if (attempt < 3 && String(e).includes('EADDRINUSE')) continue
          throw e
        }
      }
    } catch (e) {
      rmSync(dataDir, { recursive: true, force: true })
      throw e
    }
  }

  get bootstrap(): string {
    return `127.0.0.1:${this.port}`
  }
  /** The port of a listener given to `start` as an extra listener, by name. */
  listenerPort(name: string): number {
    const m = new RegExp(`(?:^|,)${name}://127\\.0\\.0\\.1:(\\d+)`).exec(this.settings.listeners ?? '')
    if (m === null) throw new Error(`no listener ${name}`)
    return Number(m[1])
  }
  get process(): ManagedProcess {
    return this.#proc
  }
  /** Everything every run of the server printed so far. */
  output(): string {
    return [...this.#logs, this.#proc.output()].join('\n--- restart ---\n')
  }

  /** kill -9. */
  async kill9(): Promise<void> {
    await this.#proc.kill()
  }

  /** Starts the server again on the same port and data directory (after `kill9` or `stop`). */
  async restart(): Promise<void> {
    this.#logs.push(this.#proc.output())
    this.#proc = await startServerProcess(this.settings)
  }

  /** Graceful stop (SIGTERM), then the data directory is removed. */
  async close(): Promise<void> {
    try {
      await this.#proc.stop(20_000)
    } finally {
      rmSync(this.dataDir, { recursive: true, force: true })
    }
  }
}

/** Creates topics with Topograph's own admin client (for tests whose client cannot create them). */
export async function createTopics(
  bootstrap: string,
  topics: readonly { name: string; partitions: number; configs?: Readonly<Record<string, string>> }[],
): Promise<void> {
  const admin = Admin.create({ bootstrapServers: bootstrap, clientId: 'interop-setup' })
  try {
    await admin
      .createTopics(topics.map((t) => ({ name: t.name, numPartitions: t.partitions, configs: t.configs })))
      .all()
  } finally {
    await admin.close()
  }
}

// --- Kafka's Java clients and tools ---------------------------------------------------------------

/** kafka-java: Kafka's Java clients, Streams and tools (see its README). */
export const KAFKA_JAVA_DIR = resolve(process.env.KAFKA_JAVA_DIR ?? '../shared/kafka-java')

/**
 * `false` when kafka-java is there; otherwise the reason the Java tests are not run, for node:test's
 * `skip` option (the test is then reported as skipped with this message, never as passed).
 */
export const kafkaJavaSkip: string | false = existsSync(join(KAFKA_JAVA_DIR, 'bin', 'kafka-run-class'))
  ? false
  : `not run: ${KAFKA_JAVA_DIR} (Kafka's Java clients and tools, ../shared/kafka-java) is missing`

const JAVA_SOURCES_DIR = resolve('test/interop/java')
const JAVA_PROGRAMS = ['ClientDriver.java', 'SustainedProducer.java', 'GroupConsumer.java']

/** The launcher of a Kafka tool (`kafka-console-producer`, `kafka-run-class`, …). */
export function kafkaBin(tool: string): string {
  return join(KAFKA_JAVA_DIR, 'bin', tool)
}

/** Runs a Kafka tool to its end. */
export function runKafkaTool(
  tool: string,
  args: readonly string[],
  options: SpawnOptions & { readonly timeoutMs?: number } = {},
): Promise<RunResult> {
  return run(kafkaBin(tool), args, options)
}

let compiled: Promise<string> | undefined

/**
 * The directory of the compiled test programs (test/interop/java/*.java), compiled once per content
 * version into the system's temporary directory and shared by concurrent test files (each compiles
 * into its own directory, then renames it into place).
 */
export function javaClasses(): Promise<string> {
  compiled ??= (async () => {
    const hash = createHash('sha256')
    for (const f of ['Compile.java', ...JAVA_PROGRAMS]) hash.update(readFileSync(join(JAVA_SOURCES_DIR, f)))
    const root = join(tmpdir(), 'topograph-interop-java')
    const dir = join(root, hash.digest('hex').slice(0, 16))
    if (existsSync(join(dir, '.compiled'))) return dir
    mkdirSync(root, { recursive: true })
    const work = mkdtempSync(join(root, 'build-'))
    const r = await run(
      kafkaBin('kafka-run-class'),
      [join(JAVA_SOURCES_DIR, 'Compile.java'), work, ...JAVA_PROGRAMS.map((f) => join(JAVA_SOURCES_DIR, f))],
      { timeoutMs: 300_000 },
    )
    if (r.code !== 0) {
      rmSync(work, { recursive: true, force: true })
      throw new Error(`compiling test/interop/java failed (exit ${r.code}):\n${r.stdout}${r.stderr}`)
    }
    writeFileSync(join(work, '.compiled'), '')
    try {
      renameSync(work, dir)
    } catch {
      // another test file put the same version in place first
      rmSync(work, { recursive: true, force: true })
    }
    return dir
  })()
  return compiled
}

/** Starts one of the compiled test programs with kafka-java's lib/* (and the classes) on its class path. */
export async function startJavaProgram(
  main: string,
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<ManagedProcess> {
  const classes = await javaClasses()
  return new ManagedProcess(main, kafkaBin('kafka-run-class'), [main, ...args], {
    ...options,
    env: { CLASSPATH: classes, ...options.env },
  })
}

/** Starts a Kafka Streams example application (examples/examples.jar: WordCount, TableJoin). */
export function startStreamsExample(
  name: string,
  main: 'examples.WordCount' | 'examples.TableJoin',
  args: readonly string[],
  options: SpawnOptions = {},
): ManagedProcess {
  return new ManagedProcess(name, kafkaBin('kafka-run-class'), [main, ...args], {
    ...options,
    env: { CLASSPATH: join(KAFKA_JAVA_DIR, 'examples', 'examples.jar'), ...options.env },
  })
}

/** A failure Kafka's Java client reported: its exception class and message. */
export class JavaClientError extends Error {
  readonly className: string
  constructor(className: string, message: string | null) {
    super(`${className}: ${message}`)
    this.name = 'JavaClientError'
    this.className = className
  }
}

export interface JavaRecord {
  readonly topic: string
  readonly partition: number
  readonly offset: number
  readonly timestamp: number
  readonly timestampType: string
  readonly key: string | null
  readonly value: string | number | null
  readonly headers: [string, string | null][]
  readonly leaderEpoch: number | null
}

/** ClientDriver.java in one JVM: Kafka's producer, consumer and Admin, one JSON request at a time. */
export class JavaClients {
  readonly #proc: ManagedProcess
  #queue: Promise<unknown> = Promise.resolve()
  #answered = 0

  private constructor(proc: ManagedProcess) {
    this.#proc = proc
  }

  static async start(bootstrap: string): Promise<JavaClients> {
    const proc = await startJavaProgram('ClientDriver', [bootstrap])
    await proc.waitFor(/^\{"ready":true\}$/m, 180_000)
    return new JavaClients(proc)
  }

  /** Sends one request; resolves with its `result`, rejects with a JavaClientError. */
  call<T = unknown>(request: Readonly<Record<string, unknown>>, timeoutMs = 120_000): Promise<T> {
    const next = this.#queue.then(async () => {
      const index = ++this.#answered
      this.#proc.write(`${JSON.stringify(request)}\n`)
      const answer = await this.#proc.waitUntil(
        () => {
          // complete lines only: a long answer arrives in several chunks
          const lines = this.#proc
            .stdout()
            .split('\n')
            .slice(0, -1)
            .filter((l) => l.startsWith('{"'))
          return lines.length > index ? lines[index] : undefined
        },
        timeoutMs,
        `an answer to ${String(request.op)}`,
      )
      const parsed = JSON.parse(answer) as {
        ok: boolean
        result?: T
        error?: { class: string; message: string | null }
      }
      if (!parsed.ok) throw new JavaClientError(parsed.error!.class, parsed.error!.message)
      return parsed.result as T
    })
    this.#queue = next.catch(() => undefined)
    return next
  }

  produce(
    records: readonly ProduceRecord[],
    config: Readonly<Record<string, string | number | boolean>> = {},
  ): Promise<{ partition: number; offset: number; timestamp: number }[]> {
    return this.call({ op: 'produce', config, records })
  }

  consume(request: ConsumeRequest): Promise<{
    records: JavaRecord[]
    committed?: [string, number, number][]
    offsetsForTimes?: { topic: string; partition: number; offset: number | null; timestamp: number | null }[]
  }> {
    return this.call({ op: 'consume', ...request }, (request.timeoutMs ?? 30_000) + 90_000)
  }

  async close(): Promise<void> {
    this.#proc.child.stdin!.end()
    const t = setTimeout(() => this.#proc.child.kill('SIGKILL'), 20_000)
    await this.#proc.exited
    clearTimeout(t)
  }
}

export interface ProduceRecord {
  readonly topic: string
  readonly partition?: number
  readonly key?: string | null
  readonly value: string | null
  readonly headers?: readonly (readonly [string, string | null])[]
  readonly timestamp?: number
}

export interface ConsumeRequest {
  readonly config?: Readonly<Record<string, string | number | boolean>>
  readonly subscribe?: readonly string[]
  readonly assign?: readonly (readonly [string, number])[]
  readonly seek?:
    | 'beginning'
    | { readonly offsets: readonly (readonly [string, number, number])[] }
    | { readonly timestamps: readonly (readonly [string, number, number])[] }
  readonly maxRecords?: number
  readonly timeoutMs?: number
  readonly commit?: boolean
  readonly valueFormat?: 'string' | 'long'
}

/**
 * Re-runs `check` (500 ms apart) until it returns a value other than undefined, for conditions that
 * only a query can observe (committed offsets, a compacted log); rejects after `timeoutMs` with the
 * last value `describe` gives.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  describe: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${describe()}`)
    await new Promise((r) => setTimeout(r, 500))
  }
}

/** The header of a batch as the log stores it (what a Fetch returns, byte for byte). */
export interface StoredBatch {
  readonly baseOffset: number
  readonly lastOffsetDelta: number
  /** 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd */
  readonly codec: number
  readonly producerId: number
  readonly producerEpoch: number
  readonly baseSequence: number
  readonly recordsCount: number
  readonly partitionLeaderEpoch: number
}

/**
 * The batches of a partition from `fromOffset`, read with a raw Fetch (Topograph's network client,
 * no decoding but the batch headers): what codec and producer fields the log kept.
 */
export async function storedBatches(
  bootstrap: string,
  topic: string,
  partition: number,
  fromOffset = 0,
): Promise<StoredBatch[]> {
  const client = new NetworkClient({ bootstrapServers: bootstrap, clientId: 'interop-raw-fetch' })
  try {
    const out: StoredBatch[] = []
    let offset = fromOffset
    for (;;) {
      const res = await client.sendAny(
        1,
        {
          clusterId: null,
          replicaId: -1,
          replicaState: { replicaId: -1, replicaEpoch: -1n },
          maxWaitMs: 0,
          minBytes: 1,
          maxBytes: 50 * 1024 * 1024,
          isolationLevel: 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [
            {
              topic,
              topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
              partitions: [
                {
                  partition,
                  currentLeaderEpoch: -1,
                  fetchOffset: BigInt(offset),
                  lastFetchedEpoch: -1,
                  logStartOffset: -1n,
                  partitionMaxBytes: 10 * 1024 * 1024,
                  replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA',
                  highWatermark: -1n,
                },
              ],
            },
          ],
          forgottenTopicsData: [],
          rackId: '',
        },
        { maxVersion: 12 },
      )
      const p = res.responses[0]?.partitions[0]
      if (p === undefined || p.errorCode !== 0)
        throw new Error(`fetch ${topic}-${partition}: ${JSON.stringify(p)}`)
      const bytes = p.records ?? new Uint8Array(0)
      const { positions } = splitBatches(bytes)
      for (const pos of positions) {
        const h = readBatchHeader(bytes, pos)
        out.push({
          baseOffset: h.baseOffset,
          lastOffsetDelta: h.lastOffsetDelta,
          codec: h.attributes & 7,
          producerId: h.producerId,
          producerEpoch: h.producerEpoch,
          baseSequence: h.baseSequence,
          recordsCount: h.recordsCount,
          partitionLeaderEpoch: h.partitionLeaderEpoch,
        })
        offset = h.baseOffset + h.lastOffsetDelta + 1
      }
      if (positions.length === 0 || offset >= Number(p.highWatermark)) return out
    }
  } finally {
    await client.close()
  }
}

/** The end of a Java interop suite: the clients' JVM, then the server, then any child left. */
export async function closeInterop(
  java: JavaClients | undefined,
  server: InteropServer | undefined,
): Promise<void> {
  try {
    await java?.close()
    await server?.close()
  } finally {
    await killAll()
  }
}
