// The soak's ceiling: a bare server that frames requests and answers every StreamsGroupHeartbeat
// with the same valid bytes and does nothing else (the benchmarks' `bareServer`, in a process of its
// own: tools/soak/ceiling-server.ts), heartbeated by a fixed set of "ceiling members" that run on
// the load threads beside the real ones (tools/soak/members.ts), at the same interval, for the whole
// run: no churn, no restart. Their latency is what the load threads, the kernel's loopback and the
// machine's minute give a heartbeat that costs a server nothing; Topograph's p99 beside it, as a
// ratio, is what the benchmarks report against their ceiling (RELIABILITY.md, "Soak").
import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { encodeResponseFrame } from '../../src/protocol/frames.js'
import * as p from '../../src/protocol/index.js'

/** What the ceiling's process tells the soak: its port once listening, its CPU time when asked. */
export type CeilingMessage = { readonly port: number } | { readonly cpuMs: number }

/** The member epoch of the ceiling's answer, which its members heartbeat with. */
export const CEILING_MEMBER_EPOCH = 1

/**
 * The ceiling's one answer: a StreamsGroupHeartbeat v1 response as Topograph gives a member in a
 * steady group (no error, the heartbeat interval, no new assignment), as a complete frame. Its
 * correlation id is 0: the ceiling members' connections match answers in order.
 */
export function ceilingAnswer(intervalMs: number): Buffer {
  return encodeResponseFrame(
    88,
    1,
    0,
    p.createStreamsGroupHeartbeatResponse({
      memberId: 'soak-ceiling-member',
      memberEpoch: CEILING_MEMBER_EPOCH,
      heartbeatIntervalMs: intervalMs,
      acceptableRecoveryLag: 0n,
      taskOffsetIntervalMs: 60_000,
      status: null,
    }),
  )
}

/** The ceiling members on each of `threads` load threads: `members` shared out, the first ones one more. */
export function splitCeiling(members: number, threads: number): number[] {
  return Array.from(
    { length: threads },
    (_, t) => Math.floor(members / threads) + (t < members % threads ? 1 : 0),
  )
}

export interface CeilingProcess {
  readonly port: number
  readonly pid: number
  /** The process's CPU time so far (user + system), in ms. */
  cpuMs(): Promise<number>
  stop(): Promise<void>
}

const ENTRY = fileURLToPath(new URL('./ceiling-server.ts', import.meta.url))

/** Starts the ceiling's process, answering heartbeats that hold `intervalMs`. */
export function startCeiling(intervalMs: number): Promise<CeilingProcess> {
  const child: ChildProcess = fork(ENTRY, [], { execArgv: ['--import', 'tsx'] })
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the ceiling's process exited (${code})`))
    child.once('exit', onExit)
    child.once('error', reject)
    child.once('message', (m: CeilingMessage) => {
      if (!('port' in m)) return reject(new Error(`the ceiling's process said ${JSON.stringify(m)}`))
      child.off('exit', onExit)
      child.off('error', reject)
      resolve({
        port: m.port,
        pid: child.pid as number,
        cpuMs: () =>
          new Promise((answer, fail) => {
            if (!child.connected) return fail(new Error("the ceiling's process is gone"))
            child.once('message', (x: CeilingMessage) => answer('cpuMs' in x ? x.cpuMs : Number.NaN))
            child.send('cpu')
          }),
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done()
            child.once('exit', () => done())
            child.disconnect()
          }),
      })
    })
    child.send({ base64: ceilingAnswer(intervalMs).toString('base64') })
  })
}
