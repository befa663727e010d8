// Preloaded into the soak's server process (`node --import`): once a second it appends one JSON
// line to the file named by SOAK_SERVER_MEMORY_FILE with what the soak cannot see from outside:
// the process's memory (`process.memoryUsage()`: RSS, heap used and total, external, array
// buffers), its event loop's delay in that second (highest and 99th percentile, the timer
// resolution taken off), its event-loop utilisation and CPU time (all threads), and the garbage collector's pauses in that
// second (count, total and longest). The soak reads the lines of each minute, and reads
// /proc/<pid>/smaps_rollup itself (no cost to this process). The timer is unref'd: it never keeps
// the process alive, and it costs one small synchronous append a second.
import { appendFileSync } from 'node:fs'
import { monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks'

const file = process.env.SOAK_SERVER_MEMORY_FILE
if (file !== undefined && file !== '') {
  // The histogram records the time between two firings of a `RESOLUTION_MS` timer, so an idle loop
  // reads RESOLUTION_MS: the delay is what lies beyond it.
  const RESOLUTION_MS = 5
  const loop = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  loop.enable()
  let gcCount = 0
  let gcMs = 0
  let gcMaxMs = 0
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcCount++
      gcMs += e.duration
      if (e.duration > gcMaxMs) gcMaxMs = e.duration
    }
  })
  gc.observe({ entryTypes: ['gc'] })
  let elu = performance.eventLoopUtilization()
  let cpu = process.cpuUsage()
  const delay = (ns) => (loop.count === 0 ? 0 : Math.max(0, ns / 1e6 - RESOLUTION_MS))
  const write = () => {
    const m = process.memoryUsage()
    const now = performance.eventLoopUtilization()
    const cpuNow = process.cpuUsage()
    const line = {
      at: Date.now(),
      pid: process.pid,
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      loopMaxMs: delay(loop.max),
      loopP99Ms: delay(loop.percentile(99)),
      elu: performance.eventLoopUtilization(now, elu).utilization,
      cpuMs: (cpuNow.user - cpu.user + cpuNow.system - cpu.system) / 1000,
      gcCount,
      gcMs,
      gcMaxMs,
    }
    elu = now
    cpu = cpuNow
    loop.reset()
    gcCount = 0
    gcMs = 0
    gcMaxMs = 0
    appendFileSync(file, `${JSON.stringify(line)}\n`)
  }
  setInterval(write, 1000).unref()
  write()
}
