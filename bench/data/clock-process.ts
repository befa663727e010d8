// The latency runs' clock watch (bench/data/clock-gaps.ts) in a process of its own, started by
// throughput.ts, which puts this process's main thread alone at a real-time priority where it may:
// the soak's tick loop (tools/soak/clock-watch.ts) on this main thread, reading the monotonic clock
// that every process of the machine shares (process.hrtime). It sends each gap as it sees it, and
// answers a `count` message with its ticks so far, its own CPU and the time; it exits when its
// parent goes.
import { type ClockEvent, type ClockReading, tickClocks } from '../../tools/soak/clock-watch.js'
import { CLOCK_WATCH_GAP_MS, CLOCK_WATCH_TICK_MS, type ClockProcessMessage } from './clock-gaps.js'

const send = (m: ClockProcessMessage) => process.send?.(m)
const mono = () => Number(process.hrtime.bigint()) / 1e6
const watch = tickClocks(
  (e: ClockEvent, at: ClockReading) => {
    if (e.kind !== 'wall-step')
      send({ type: 'gap', kind: e.kind, atMono: at.mono, ms: e.ms, waitedMs: e.waitedMs ?? Number.NaN })
  },
  {
    tickMs: CLOCK_WATCH_TICK_MS,
    gapMs: CLOCK_WATCH_TICK_MS + CLOCK_WATCH_GAP_MS,
    periodMs: CLOCK_WATCH_TICK_MS,
    mono,
  },
)
process.on('message', (m: unknown) => {
  if (m !== 'count') return
  const cpu = process.cpuUsage()
  send({ type: 'count', ticks: watch.ticks(), atMono: mono(), cpuMs: (cpu.user + cpu.system) / 1000 })
})
process.on('disconnect', () => {
  watch.stop()
  process.exit(0)
})
send({ type: 'ready' })
