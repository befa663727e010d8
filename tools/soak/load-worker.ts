// One load thread of the soak: a `MemberLoad` (an application instance: its own connections and the
// members of its groups) driven by the main thread's calls (tools/soak/load-thread.ts).
import { parentPort, workerData } from 'node:worker_threads'
import type { LoadCall, LoadReply } from './load-thread.js'
import { MemberLoad, type MemberLoadConfig } from './members.js'

const port = parentPort
if (port === null) throw new Error('tools/soak/load-worker.ts runs in a worker thread')
const load = new MemberLoad(workerData as MemberLoadConfig, (line) =>
  port.postMessage({ log: line } satisfies LoadReply),
)
port.on('message', async (call: LoadCall) => {
  try {
    let result: unknown
    const transfer: ArrayBuffer[] = []
    switch (call.method) {
      case 'join':
        result = await load.join()
        break
      case 'replaceOne':
        load.replaceOne()
        break
      case 'restartBegins':
        load.restartBegins()
        break
      case 'listeningAgain':
        load.listeningAgain(call.at as number)
        break
      case 'restartEnds':
        load.restartEnds()
        break
      case 'takeRestartReturns':
        result = load.takeRestartReturns()
        break
      case 'roll': {
        const minute = load.roll()
        transfer.push(
          minute.latency.buffer as ArrayBuffer,
          minute.handled.buffer as ArrayBuffer,
          minute.ceiling.buffer as ArrayBuffer,
        )
        result = minute
        break
      }
      case 'stop':
        result = load.stop()
        break
    }
    port.postMessage({ id: call.id, result } satisfies LoadReply, transfer)
  } catch (e) {
    port.postMessage({ id: call.id, error: (e as Error).stack ?? String(e) } satisfies LoadReply)
  }
})
