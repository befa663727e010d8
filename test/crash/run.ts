/**
 * One crash-point run: a real `topograph start` process (SQLite coordinator storage, file logs and
 * the built-in SQLite topology description plugin, all in a temporary data.dir) is driven through
 * one operation and killed with SIGKILL at a seeded point; a server restarted in this process on
 * the same data is checked (checker.ts) right after loading, again after the clients did what they
 * would do next (the operation's `converge`), and once more after a clean restart, whose state must
 * equal the state before it.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Rng } from '../../tools/fuzz/rng.js'
import { FAST_GROUPS } from '../helpers/kip1331.js'
import { startTopographProcess, type TopographProcess } from '../helpers/topograph-process.js'
import { startTestServer, type TestServer, tempDataDir } from '../server/harness.js'
import { FrameConnection } from '../server/wire-client.js'
import { groupSnapshot, txnSnapshot } from '../sim/snapshot.js'
import { checkCleanedUp, checkCoordinator, checkData, type PartitionRead } from './checker.js'
import { Observations } from './model.js'
import type { CrashOp, DriveContext } from './ops.js'

/** Settings of the killed process and of the restarted server alike. */
export const BASE_SETTINGS: Readonly<Record<string, string>> = {
  'coordinator.storage': 'sqlite',
  'log.storage': 'file',
  ...FAST_GROUPS,
  // Members do not heartbeat across the restart: their sessions must outlive the checks.
  'group.streams.session.timeout.ms': '60000',
  'group.streams.min.session.timeout.ms': '6000',
  'transaction.state.log.num.partitions': '3',
  'transaction.abort.timed.out.transaction.cleanup.interval.ms': '200',
  'group.streams.topology.description.plugin.class': 'sqlite',
}

/** The restarted server runs no background job that would change the state under the checks. */
const CHECK_SETTINGS: Readonly<Record<string, string>> = {
  'offsets.retention.check.interval.ms': '3600000',
  'log.retention.check.interval.ms': '3600000',
  'log.cleaner.enable': 'false',
}

export interface RunOptions {
  /** Node arguments that start the CLI (default: the sources through tsx). */
  readonly entry?: readonly string[]
  /** Keep the data.dir of a run with violations (its path is printed with them). */
  readonly keep?: boolean
}

export interface RunResult {
  readonly op: string
  readonly run: number
  readonly seed: number
  readonly violations: string[]
  readonly acksAtKill: number
  readonly trigger: string
  readonly ms: number
  /** Milliseconds of each phase: start, drive to the kill, restart and checks, retries, clean restart. */
  readonly phases: number[]
}

/** The seed of run `run` of `op` in a campaign with `seed`. */
export function runSeed(seed: number, op: string, run: number): number {
  let h = (seed ^ 0x9e3779b9) >>> 0
  for (const ch of `${op}#${run}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0
  return h
}

function snapshotOf(server: TestServer, reads: Map<string, PartitionRead>): string {
  const group = server.server.context.coordinator
  const txn = server.server.context.transactions
  const shards: string[] = []
  for (let i = 0; i < group.numShards; i++) {
    const s = group.peekShard(i)
    if (s !== undefined) shards.push(groupSnapshot(s))
  }
  for (let i = 0; i < txn.numShards; i++) {
    const s = txn.peekShard(i)
    if (s !== undefined) shards.push(txnSnapshot(s))
  }
  const data = [...reads].map(([k, r]) => [
    k,
    r.logStartOffset,
    r.highWatermark,
    r.lastStableOffset,
    r.records.map((x) => `${x.offset}:${x.key}:${x.value}`).join(','),
  ])
  return JSON.stringify({ shards, data })
}

// The server answers within milliseconds; at a load average of 30 a niced process has waited
// longer than the test clients' default 5 s for one answer.
FrameConnection.defaultResponseTimeoutMs = 60_000

export async function runOne(
  op: CrashOp,
  run: number,
  seed: number,
  options: RunOptions = {},
): Promise<RunResult> {
  const started = Date.now()
  const s = runSeed(seed, op.name, run)
  const rng = new Rng(s)
  const dataDir = tempDataDir()
  const settings = {
    ...BASE_SETTINGS,
    'data.dir': dataDir,
    'topology.description.sqlite.path': join(dataDir, 'topology-descriptions.db'),
  }
  const pluginDb = settings['topology.description.sqlite.path']
  const obs = new Observations()
  const violations: string[] = []
  const opened: { close(): void }[] = []
  const problems: string[] = []
  const trigger = op.kill(rng)
  let acks = 0
  let counting = false
  let acksAtKill = -1
  const phases: number[] = []
  let mark = started
  const phase = (): void => {
    const now = Date.now()
    phases.push(now - mark)
    mark = now
  }
  // A loaded machine has taken over 30 s to start one.
  let proc: TopographProcess
  try {
    proc = await startTopographProcess(
      { ...settings, ...op.processSettings },
      { entry: options.entry, startTimeoutMs: 180_000 },
    )
  } catch (e) {
    rmSync(dataDir, { recursive: true, force: true })
    throw e
  }
  let killTimer: NodeJS.Timeout | undefined
  const kill = (): void => {
    if (killTimer !== undefined) return
    killTimer = setTimeout(() => {
      acksAtKill = acks
      proc.child.kill('SIGKILL')
    }, trigger.delayMs)
  }
  const ctx: DriveContext = {
    port: proc.port,
    rng,
    obs,
    opened,
    problems,
    ack: () => {
      if (!counting) return
      acks++
      if (acks >= trigger.afterAcks) kill()
    },
  }
  let server: TestServer | undefined
  try {
    phase()
    await op.setup(ctx)
    counting = true
    if (trigger.afterAcks === 0) kill()
    const driving = op.drive(ctx)
    // A finite operation that finished before its trigger is killed anyway; so is one that stopped
    // making progress.
    const guard = setTimeout(kill, 60_000)
    await Promise.race([driving.then(kill), proc.exited])
    const exit = await proc.exited
    clearTimeout(guard)
    await driving
    if (exit.signal !== 'SIGKILL')
      violations.push(
        `the process exited by itself (code ${exit.code}, signal ${exit.signal}):\n${proc.output().slice(-2000)}`,
      )
    for (const c of opened.splice(0)) c.close()
    violations.push(...problems.splice(0))
    phase()

    // Restart on the same data and check.
    const checkSettings = { ...settings, ...CHECK_SETTINGS }
    server = await startTestServer(checkSettings, {}, dataDir)
    const v1: string[] = []
    await checkCoordinator(server, pluginDb, obs, v1)
    await checkData(server, obs, v1, { transactions: false })
    violations.push(...v1.map((x) => `right after the restart: ${x}`))
    phase()

    await op.converge({ port: server.port, obs, problems })
    const v2: string[] = [...problems.splice(0)]
    await checkCoordinator(server, pluginDb, obs, v2)
    await checkCleanedUp(server, pluginDb, v2)
    const reads = await checkData(server, obs, v2, { transactions: true })
    violations.push(...v2.map((x) => `after the clients' retries: ${x}`))
    phase()
    const before = snapshotOf(server, reads)
    await server.stop(true)
    server = undefined

    server = await startTestServer(checkSettings, {}, dataDir)
    const v3: string[] = []
    const reads2 = await checkData(server, obs, v3, { transactions: true })
    const after = snapshotOf(server, reads2)
    if (after !== before)
      v3.push(`the state after a clean restart differs:\n  before ${before}\n  after  ${after}`)
    violations.push(...v3.map((x) => `after a clean restart: ${x}`))
    phase()
  } catch (e) {
    violations.push(`the run failed: ${(e as Error).stack ?? e}`)
  } finally {
    clearTimeout(killTimer)
    for (const c of opened) c.close()
    await proc.kill()
    await server?.stop(true).catch(() => undefined)
    if (options.keep && violations.length > 0) violations.push(`data.dir kept: ${dataDir}`)
    else rmSync(dataDir, { recursive: true, force: true })
  }
  return {
    op: op.name,
    run,
    seed: s,
    violations,
    acksAtKill,
    trigger: `after ${trigger.afterAcks} acks + ${trigger.delayMs} ms`,
    ms: Date.now() - started,
    phases,
  }
}
