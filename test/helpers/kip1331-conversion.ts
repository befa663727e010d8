// Fixtures for the classic JoinGroup conversion of an empty streams group (KIP-1331 §7): a raw
// JoinGroup v9, an empty streams group whose member pushed a description before leaving (stored 0),
// and a real `topograph start` child process for kill -9 scenarios.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import type { WireClient } from '../server/wire-client.js'
import { FAST_GROUPS, joinMember, type PluginFiles, push } from './kip1331.js'

export interface ClassicJoinBody {
  readonly errorCode: number
  readonly memberId: string
  readonly leader: string
  readonly generationId: number
}

/** One JoinGroup v9 (consumer protocol, one "range" assignor). */
export async function classicJoin(
  c: WireClient,
  groupId: string,
  memberId: string,
): Promise<ClassicJoinBody> {
  const { body } = await c.request<ClassicJoinBody>(11, 9, {
    groupId,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new TextEncoder().encode('sub') }],
    reason: null,
  })
  return body
}

/**
 * A streams group whose member was asked for its description, pushed it at topology epoch 0 and
 * left: the group is empty with stored epoch 0 and the plugin holds the description.
 */
export async function streamsGroupWithStoredDescription(
  port: number,
  groupId: string,
  opened: { close(): void }[],
): Promise<void> {
  const m = await joinMember(port, groupId)
  opened.push(m)
  const hb = await m.heartbeat()
  assert.deepEqual([hb.errorCode, hb.topologyDescriptionRequired], [0, true])
  assert.equal((await push(m.client, groupId, m.memberId, 0)).errorCode, 0)
  assert.equal((await m.leave()).errorCode, 0)
}

export interface ServerProcess {
  readonly child: ChildProcess
  readonly port: number
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** SIGKILL unless it already exited, then wait for the exit. */
  kill(): Promise<void>
}

/** `topograph start` on sqlite coordinator storage with the plugin's configuration. */
export async function startServerProcess(
  dataDir: string,
  plugin: PluginFiles,
  extra: Record<string, string> = {},
): Promise<ServerProcess> {
  const settings: Record<string, string> = {
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'data.dir': dataDir,
    'console.listener': 'none',
    'coordinator.storage': 'sqlite',
    ...FAST_GROUPS,
    ...plugin.configs,
    ...extra,
  }
  const args = ['--import', 'tsx', 'src/cli/topograph.ts', 'start']
  for (const [k, v] of Object.entries(settings)) args.push('--override', `${k}=${v}`)
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  }
  let out = ''
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line in time:\n${out}`)), 30_000)
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString()
        const m = /Listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/.exec(out)
        if (m) {
          clearTimeout(timer)
          resolve(Number(m[1]))
        }
      })
      child.stderr?.on('data', (d: Buffer) => {
        out += d.toString()
      })
      void exited.then(() => {
        clearTimeout(timer)
        reject(new Error(`process exited:\n${out}`))
      })
    })
    return { child, port, exited, kill }
  } catch (e) {
    await kill()
    throw e
  }
}
