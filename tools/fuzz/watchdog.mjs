// The fuzzer's watchdog, run in a worker thread so that it still runs when the main thread (the
// server and the lanes) is stuck. workerData.buffer (Float64Array): [0] the main thread's last
// heartbeat (ms), [1] the peak RSS seen here, [2 + 2 * lane] and [3 + 2 * lane] the first and last
// frame of the block each lane is on (-1: none).
// A stall longer than stallMs, or an RSS above maxRss while the main thread is stuck, is reported
// from here, straight to stdout, and ends the process (SIGKILL: nothing else could end it).
import { writeSync } from 'node:fs'
import { workerData } from 'node:worker_threads'

const s = new Float64Array(workerData.buffer)
const { seed, stallMs, maxRss, hex } = workerData

function die(what) {
  const lanes = []
  for (let i = 2; i + 1 < s.length; i += 2) for (let f = s[i]; f >= 0 && f <= s[i + 1]; f++) lanes.push(f)
  const again =
    hex.length > 0
      ? lanes.map((i) => `\n  hex ${hex[i]}\n  again: npm run fuzz -- --hex ${hex[i]}`).join('')
      : `\n  again: npm run fuzz -- --seed ${seed}${lanes.map((i) => ` --only ${i}`).join('')}`
  writeSync(1, `FINDING ${what} seed=${seed}; frames in flight: ${lanes.join(', ')}${again}\n`)
  process.kill(process.pid, 'SIGKILL')
}

setInterval(() => {
  const rss = process.memoryUsage.rss()
  if (rss > s[1]) s[1] = rss
  const stalled = Date.now() - s[0]
  if (stalled > stallMs)
    die(`event-loop-stall: no progress for ${stalled} ms (RSS ${Math.round(rss / 2 ** 20)} MB)`)
  if (rss > maxRss && stalled > 1000) die(`rss: ${Math.round(rss / 2 ** 20)} MB with the event loop stuck`)
}, 250)
