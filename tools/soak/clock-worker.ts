// The soak's clock tick thread (tools/soak/clock-watch.ts): it does nothing but tick every 10 ms,
// read both clocks and post what it saw to the main thread.
import { parentPort } from 'node:worker_threads'
import { CLOCK_TICK_MS, ClockWatch, readClocks } from './clock-watch.js'

const port = parentPort
if (port === null) throw new Error('tools/soak/clock-worker.ts runs in a worker thread')
const watch = new ClockWatch()
watch.tick(readClocks())
setInterval(() => {
  for (const e of watch.tick(readClocks())) port.postMessage(e)
}, CLOCK_TICK_MS)
