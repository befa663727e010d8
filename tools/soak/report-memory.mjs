// Preloaded into the soak's server process (`node --import`): once a second it appends one JSON
// line to the file named by SOAK_SERVER_MEMORY_FILE with what the soak cannot see from outside:
// the process's memory (`process.memoryUsage()`: RSS, heap used and total, external, array
// buffers; the young generation's committed size), its event loop's delay in that second (highest
// and 99th percentile of the probe's gaps below, its period taken off), its event-loop utilisation and CPU time (all
// threads; the main thread's own, and its time runnable but waiting for a core, from
// /proc/thread-self/schedstat), the garbage collector's pauses in that second (count, total and longest, and apart the
// scavenges and the mark-compacts), and its long turns (below). The soak reads the lines of each
// minute, and reads /proc/<pid>/smaps_rollup itself (no cost to this process). The timers are
// unref'd: they never keep the process alive.
//
// Long turns: a 10-ms interval timer notes, at each firing, how long it is since the previous one
// and, over that gap, the main thread's own CPU time and its time waiting for a core (Linux's
// /proc/thread-self/schedstat, read into a reused buffer) and the loop's active time
// (`performance.eventLoopUtilization`). A gap of 10 ms or more beyond the period, in which the loop
// was active for at least half of that delay (else the loop sat in epoll and the probe was late),
// is a long turn, counted as *on-CPU* when the main thread ran for at least half of the delay (the
// server's own work; its garbage collection apart, when GC pauses cover at least half of it),
// *waiting* when it waited for a core for at least half of it (the machine), and *other* otherwise
// (blocked in a system call, or a mix). Each long turn is classified about a second later, once
// the GC entries of its time have arrived. SOAK_SERVER_TURNS_FILE=FILE also appends every long
// turn there, with its start on the monotonic clock in µs (the clock of a CPU profile's samples),
// for tools/soak/long-turns.ts to set beside a CPU profile.
//
// Allocations: SOAK_SERVER_HEAP_SAMPLE=DIR samples what the process allocates, garbage included
// (the inspector's sampling heap profiler with the objects collected by scavenges and by
// mark-compacts kept), from SOAK_SERVER_HEAP_SAMPLE_FROM_S seconds after the process started
// (default 60) for SOAK_SERVER_HEAP_SAMPLE_S seconds (default 60), one sample every 32 KiB on
// average, and writes DIR/heap-<pid>.json with the profile and the window's GC counts;
// tools/soak/heap-sample.ts attributes it.
//
// Pauses: SOAK_SERVER_GC_FILE=FILE appends every GC pause of the main isolate, one JSON line with
// its pid, its start on the wall clock in ms (`at`, as the load's SOAK_SLOW_HEARTBEATS_FILE stamps
// its heartbeats), its length and its kind (perf_hooks' constants: 1 a scavenge, 4 a mark-compact's
// pause, 8 an incremental marking step, 16 weak callbacks), with each second's line. The pauses
// name the main isolate only: the concurrent marking and the parallel scavenge's helpers are in them
// only as far as the main thread waits for them.
import { appendFileSync, openSync, readSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { join } from 'node:path'
import { constants, PerformanceObserver, performance } from 'node:perf_hooks'
import { getHeapSpaceStatistics } from 'node:v8'

const file = process.env.SOAK_SERVER_MEMORY_FILE
const turnsFile = process.env.SOAK_SERVER_TURNS_FILE
const gcFile = process.env.SOAK_SERVER_GC_FILE
if (file !== undefined && file !== '') {
  let gcCount = 0
  let gcMs = 0
  let gcMaxMs = 0
  let scavenges = 0
  let scavengeMs = 0
  let markCompacts = 0
  let markCompactMs = 0
  let totalScavenges = 0
  let totalMarkCompacts = 0
  /** GC pauses of the last seconds (start, end in performance.now() ms, kind), for the long turns. */
  const pauses = []
  /** SOAK_SERVER_GC_FILE: this second's pauses, one JSON line each. */
  let gcLines = []
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcCount++
      gcMs += e.duration
      if (e.duration > gcMaxMs) gcMaxMs = e.duration
      // detail.kind: perf_hooks.constants.NODE_PERFORMANCE_GC_MINOR (a scavenge), _MAJOR (a
      // mark-compact's pause), _INCREMENTAL (a step of incremental marking), _WEAKCB.
      const kind = e.detail?.kind
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        totalScavenges++
        scavenges++
        scavengeMs += e.duration
      } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        totalMarkCompacts++
        markCompacts++
        markCompactMs += e.duration
      }
      pauses.push(e.startTime, e.startTime + e.duration, kind ?? 0)
      if (gcFile !== undefined && gcFile !== '')
        gcLines.push(
          `{"pid":${process.pid},"at":${(performance.timeOrigin + e.startTime).toFixed(3)},"ms":${e.duration.toFixed(3)},"kind":${kind ?? 0}}`,
        )
    }
  })
  gc.observe({ entryTypes: ['gc'] })

  // One probe timer serves both the loop's delay (each gap beyond the period; an idle loop reads
  // the period) and the long turns, instead of monitorEventLoopDelay's timer beside it: each timer
  // wakes an idle loop, at some 50–100 µs of CPU a wake-up on this machine's virtual cores. A
  // 10-ms period catches every turn of 20 ms or more and some of those of 10–20 ms.
  const TICK_MS = 10
  const LONG_MS = 10
  /** The delays of this second's probe gaps (ms), for the highest and the 99th percentile. */
  let delays = new Float64Array(512)
  let delayCount = 0
  let schedFd
  try {
    schedFd = openSync('/proc/thread-self/schedstat', 'r')
  } catch {
    schedFd = undefined
  }
  const schedBuf = Buffer.alloc(128)
  let schedCpuMs = 0
  let schedWaitMs = 0
  /** Reads the main thread's CPU and run-queue time (ns in the file) into schedCpuMs/schedWaitMs. */
  const readSched = () => {
    if (schedFd === undefined) return
    const n = readSync(schedFd, schedBuf, 0, schedBuf.length, 0)
    let field = 0
    let x = 0
    for (let i = 0; i < n; i++) {
      const c = schedBuf[i]
      if (c >= 48 && c <= 57) {
        x = x * 10 + (c - 48)
        continue
      }
      if (field === 0) schedCpuMs = x / 1e6
      else {
        schedWaitMs = x / 1e6
        return
      }
      field++
      x = 0
    }
  }
  readSched()
  let lastAt = performance.now()
  let lastCpu = schedCpuMs
  let lastWait = schedWaitMs
  let lastLoop = performance.eventLoopUtilization()
  /** Long turns not classified yet (their GC entries may still be on the way). */
  let pending = []
  const turns = { cpu: 0, cpuGc: 0, wait: 0, other: 0, cpuMaxMs: 0, cpuMs: 0 }
  const tick = () => {
    const now = performance.now()
    const gap = now - lastAt
    if (delayCount === delays.length) {
      const more = new Float64Array(2 * delays.length)
      more.set(delays)
      delays = more
    }
    delays[delayCount++] = Math.max(0, gap - TICK_MS)
    readSched()
    const loopNow = performance.eventLoopUtilization()
    if (gap - TICK_MS >= LONG_MS) {
      pending.push({
        at: lastAt,
        // The monotonic clock in µs (CLOCK_MONOTONIC, as V8's CPU profile timestamps).
        hrUs: Number(process.hrtime.bigint() / 1000n) - Math.round(gap * 1000),
        ms: gap,
        activeMs: loopNow.active - lastLoop.active,
        cpuMs: schedCpuMs - lastCpu,
        waitMs: schedWaitMs - lastWait,
      })
    }
    lastLoop = loopNow
    lastAt = now
    lastCpu = schedCpuMs
    lastWait = schedWaitMs
  }
  setInterval(tick, TICK_MS).unref()
  const classify = (now) => {
    if (pending.length === 0) {
      if (pauses.length > 0 && pauses[pauses.length - 2] < now - 5000) pauses.length = 0
      return
    }
    const keep = []
    const lines = []
    for (const t of pending) {
      if (t.at + t.ms > now - 1000) {
        keep.push(t)
        continue
      }
      let gcIn = 0
      // The kinds of the GC pauses inside the turn, or'ed (perf_hooks.constants.NODE_PERFORMANCE_GC_*).
      let gcKinds = 0
      for (let i = 0; i < pauses.length; i += 3) {
        const from = Math.max(pauses[i], t.at)
        const to = Math.min(pauses[i + 1], t.at + t.ms)
        if (to > from) {
          gcIn += to - from
          gcKinds |= pauses[i + 2]
        }
      }
      const delay = t.ms - TICK_MS
      let kind = 'other'
      // A loop idle for most of the gap (waiting in epoll) had no long turn: its probe was late.
      if (t.activeMs < delay / 2) kind = 'late'
      else if (t.cpuMs >= delay / 2) kind = gcIn >= delay / 2 ? 'cpu-gc' : 'cpu'
      else if (t.waitMs >= delay / 2) kind = 'wait'
      if (kind === 'late') {
        // Not counted.
      } else if (kind === 'cpu') {
        turns.cpu++
        turns.cpuMs += t.ms
        if (t.ms > turns.cpuMaxMs) turns.cpuMaxMs = t.ms
      } else if (kind === 'cpu-gc') turns.cpuGc++
      else if (kind === 'wait') turns.wait++
      else turns.other++
      if (turnsFile !== undefined && turnsFile !== '')
        lines.push(JSON.stringify({ pid: process.pid, kind, gcMs: gcIn, gcKinds, ...t }))
    }
    pending = keep
    // GC pauses older than every turn still pending are not needed any more.
    const oldest = keep.length > 0 ? keep[0].at : now - 1000
    let drop = 0
    while (drop < pauses.length && pauses[drop + 1] < oldest) drop += 3
    if (drop > 0) pauses.splice(0, drop)
    if (lines.length > 0) appendFileSync(turnsFile, `${lines.join('\n')}\n`)
  }

  let elu = performance.eventLoopUtilization()
  let cpu = process.cpuUsage()
  let mainCpuAt = schedCpuMs
  let mainWaitAt = schedWaitMs
  const write = () => {
    readSched()
    const m = process.memoryUsage()
    const now = performance.eventLoopUtilization()
    const cpuNow = process.cpuUsage()
    classify(performance.now())
    const seen = delays.subarray(0, delayCount).sort()
    const loopMax = delayCount === 0 ? 0 : seen[delayCount - 1]
    const loopP99 = delayCount === 0 ? 0 : seen[Math.min(delayCount - 1, Math.floor(delayCount * 0.99))]
    delayCount = 0
    let newSpace = 0
    let oldSpace = 0
    let oldSpaceUsed = 0
    for (const s of getHeapSpaceStatistics()) {
      if (s.space_name === 'new_space') newSpace = s.space_size
      else if (s.space_name === 'old_space') {
        oldSpace = s.space_size
        oldSpaceUsed = s.space_used_size
      }
    }
    const line = {
      at: Date.now(),
      pid: process.pid,
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      newSpace,
      oldSpace,
      oldSpaceUsed,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      loopMaxMs: loopMax,
      loopP99Ms: loopP99,
      elu: performance.eventLoopUtilization(now, elu).utilization,
      cpuMs: (cpuNow.user - cpu.user + cpuNow.system - cpu.system) / 1000,
      // The main thread alone: its time on a CPU, and runnable but waiting for one (schedstat).
      mainCpuMs: schedCpuMs - mainCpuAt,
      mainWaitMs: schedWaitMs - mainWaitAt,
      gcCount,
      gcMs,
      gcMaxMs,
      scavenges,
      scavengeMs,
      markCompacts,
      markCompactMs,
      longCpu: turns.cpu,
      longCpuGc: turns.cpuGc,
      longWait: turns.wait,
      longOther: turns.other,
      longCpuMaxMs: turns.cpuMaxMs,
      longCpuMs: turns.cpuMs,
    }
    elu = now
    cpu = cpuNow
    mainCpuAt = schedCpuMs
    mainWaitAt = schedWaitMs
    gcCount = 0
    gcMs = 0
    gcMaxMs = 0
    scavenges = 0
    scavengeMs = 0
    markCompacts = 0
    markCompactMs = 0
    turns.cpu = 0
    turns.cpuGc = 0
    turns.wait = 0
    turns.other = 0
    turns.cpuMaxMs = 0
    turns.cpuMs = 0
    appendFileSync(file, `${JSON.stringify(line)}\n`)
    if (gcLines.length > 0) {
      appendFileSync(gcFile, `${gcLines.join('\n')}\n`)
      gcLines = []
    }
  }
  setInterval(write, 1000).unref()
  write()

  const heapDir = process.env.SOAK_SERVER_HEAP_SAMPLE
  if (heapDir !== undefined && heapDir !== '') {
    const fromS = Number(process.env.SOAK_SERVER_HEAP_SAMPLE_FROM_S ?? 60)
    const forS = Number(process.env.SOAK_SERVER_HEAP_SAMPLE_S ?? 60)
    const session = new Session()
    session.connect()
    let window
    setTimeout(async () => {
      await session.post('HeapProfiler.enable')
      await session.post('HeapProfiler.startSampling', {
        samplingInterval: 32768,
        includeObjectsCollectedByMinorGC: true,
        includeObjectsCollectedByMajorGC: true,
      })
      window = { startedAt: Date.now(), scavenges: totalScavenges, markCompacts: totalMarkCompacts }
      setTimeout(async () => {
        const { profile } = await session.post('HeapProfiler.stopSampling')
        writeFileSync(
          join(heapDir, `heap-${process.pid}.json`),
          JSON.stringify({
            ...window,
            stoppedAt: Date.now(),
            scavenges: totalScavenges - window.scavenges,
            markCompacts: totalMarkCompacts - window.markCompacts,
            profile,
          }),
        )
        session.disconnect()
      }, forS * 1000).unref()
    }, fromS * 1000).unref()
  }
}
