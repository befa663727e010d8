// The soak's load threads: the streams members are spread over N worker threads of the load process
// (`--load-threads`), each a `MemberLoad` with its own connections and the members of its groups,
// as N application instances would be; the main thread keeps the server process, the data plane,
// the churn's timing, the restart and the end check, and merges the threads' minutes into its rows.
// With 0 threads the one `MemberLoad` runs on the main thread, as the load ran before it had threads.
import { setFlagsFromString } from 'node:v8'
import { Worker, type WorkerOptions } from 'node:worker_threads'
import { cliNodeOptions } from '../../test/helpers/topograph-process.js'
import type { ThreadMinute } from './measures.js'
import { MemberLoad, type MemberLoadConfig, type MemberLoadTotals } from './members.js'

/** A call from the main thread to a load thread, and the thread's reply (or a line to log). */
export interface LoadCall {
  readonly id: number
  readonly method:
    | 'join'
    | 'replaceOne'
    | 'restartBegins'
    | 'listeningAgain'
    | 'restartEnds'
    | 'takeRestartReturns'
    | 'roll'
    | 'stop'
  readonly at?: number
}
export interface LoadReply {
  readonly id?: number
  readonly result?: unknown
  readonly error?: string
  readonly log?: string
}

/** One application instance of the load, on a worker thread or on the main thread. */
export interface LoadThread {
  /** Opens its connections and joins its members; how many joined. */
  join(): Promise<number>
  /** Replaces one member (churn). */
  replaceOne(): Promise<void>
  /** The server is about to stop: resolves once the thread has marked its members. */
  restartBegins(): Promise<void>
  /** When the restarted server listened again, on the wall clock (`wallNow`). */
  listeningAgain(at: number): Promise<void>
  restartEnds(): Promise<void>
  takeRestartReturns(): Promise<number[]>
  /** Ends the thread's minute and starts the next. */
  roll(): Promise<ThreadMinute>
  /** Stops its members and connections (and the thread). */
  stop(): Promise<MemberLoadTotals>
}

export function inProcessThread(config: MemberLoadConfig, log: (line: string) => void): LoadThread {
  const load = new MemberLoad(config, log)
  return {
    join: () => load.join(),
    replaceOne: async () => load.replaceOne(),
    restartBegins: async () => load.restartBegins(),
    listeningAgain: async (at) => load.listeningAgain(at),
    restartEnds: async () => load.restartEnds(),
    takeRestartReturns: async () => load.takeRestartReturns(),
    roll: async () => load.roll(),
    stop: async () => load.stop(),
  }
}

/**
 * The young generation's flags of the CLI's `#!` line (`--min-semi-space-size`,
 * `--max-semi-space-size`: the server's fixed size), for the load threads' heaps. V8 reads its flags
 * when it makes a heap, so flags set on this process before a worker starts size that worker's heap
 * (the main thread's stays as it was). Left to itself, V8 sizes each thread's young generation by the
 * thread's allocation and resizes it as that moves: 2,500 members' threads went between 4 and 32 MB
 * in the first minutes of a run (twice the scavenges, and mark-compacts), and a thread of 500 members
 * stays at 1 MB, scavenging every two seconds, so that every member's heartbeat timer (due 5 s
 * later) outlives two scavenges and is promoted. The load's pauses are in the latencies it measures
 * (RELIABILITY.md, "Soak").
 */
export function loadThreadHeapFlags(): string[] {
  return cliNodeOptions().filter((o) => /^--(min|max)-semi-space-size=/.test(o))
}

let heapFlagsSet = false

/** A worker thread of the load, its heap sized by {@link loadThreadHeapFlags}. */
export function loadWorker(entry: URL | string, options: WorkerOptions): Worker {
  if (!heapFlagsSet) {
    for (const flag of loadThreadHeapFlags()) setFlagsFromString(flag)
    heapFlagsSet = true
  }
  return new Worker(entry, options)
}

export function workerThread(config: MemberLoadConfig, log: (line: string) => void): LoadThread {
  const worker = loadWorker(new URL('./load-worker.mjs', import.meta.url), { workerData: config })
  const pending = new Map<number, { resolve(x: unknown): void; reject(e: Error): void }>()
  let nextId = 1
  let failure: Error | undefined
  const fail = (e: Error) => {
    failure ??= e
    for (const x of pending.values()) x.reject(e)
    pending.clear()
  }
  worker.on('message', (reply: LoadReply) => {
    if (reply.log !== undefined) {
      log(`thread ${config.index}: ${reply.log}`)
      return
    }
    const x = pending.get(reply.id as number)
    if (x === undefined) return
    pending.delete(reply.id as number)
    if (reply.error !== undefined) x.reject(new Error(`load thread ${config.index}: ${reply.error}`))
    else x.resolve(reply.result)
  })
  // A load thread that fails (an unexpected exception in a member's handler) fails the run.
  worker.on('error', (e) => fail(new Error(`load thread ${config.index} failed: ${e.stack ?? e}`)))
  worker.on('exit', (code) => fail(new Error(`load thread ${config.index} exited (${code})`)))
  const call = <T>(method: LoadCall['method'], at?: number): Promise<T> => {
    if (failure !== undefined) return Promise.reject(failure)
    const id = nextId++
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (x: unknown) => void, reject })
      worker.postMessage({ id, method, at } satisfies LoadCall)
    })
  }
  return {
    join: () => call('join'),
    replaceOne: () => call('replaceOne'),
    restartBegins: () => call('restartBegins'),
    listeningAgain: (at) => call('listeningAgain', at),
    restartEnds: () => call('restartEnds'),
    takeRestartReturns: () => call('takeRestartReturns'),
    roll: () => call('roll'),
    // The thread ends whether or not it could stop cleanly: a live worker would keep the process up.
    stop: async () => {
      try {
        return await call<MemberLoadTotals>('stop')
      } finally {
        failure ??= new Error(`load thread ${config.index} stopped`)
        await worker.terminate()
      }
    },
  }
}
