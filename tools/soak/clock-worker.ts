// The soak's clock tick thread (tools/soak/clock-watch.ts): it does nothing but tick every 10 ms,
// read both clocks and post what it saw to the main thread.
import { parentPort } from 'node:worker_threads'
import { tickClocks } from './clock-watch.js'

const port = parentPort
if (port === null) throw new Error('tools/soak/clock-worker.ts runs in a worker thread')
tickClocks((e) => port.postMessage(e))
