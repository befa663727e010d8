// The latency runs' clock watch process (bench/data/clock-gaps.ts, clock-process.ts): only its main
// thread is raised (a real-time priority as root, else nice -10 where allowed); every other thread
// of it (V8's, Node's, the module loader's) keeps the default scheduling, and a watch given a CPU
// has every thread on that CPU. With all its threads at a real-time priority on one CPU, a
// collection whose main thread waited for a helper spun until the kernel's real-time throttling.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { after, test } from 'node:test'
import { type ClockWatchProcess, schedulingOf, startClockWatch } from '../../bench/data/clock-gaps.js'

const started: ClockWatchProcess[] = []
after(() => {
  for (const w of started) w.stop()
})

/** Each thread of a process: its id, scheduling (schedulingOf) and the CPUs it may run on. */
function threads(pid: number): { tid: number; scheduling: string; cpus: string }[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => ({
    tid: Number(tid),
    scheduling: schedulingOf(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')),
    cpus:
      /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))?.[1] ?? '',
  }))
}

const ours = schedulingOf(readFileSync('/proc/self/stat', 'utf8'))

for (const cpu of [undefined, 0]) {
  test(`clock watch${cpu === undefined ? '' : ` on CPU ${cpu}`}: its main thread alone is raised`, async () => {
    const w = await startClockWatch(cpu)
    assert.ok(w !== null)
    started.push(w)
    const all = threads(w.pid)
    const main = all.find((t) => t.tid === w.pid)
    assert.ok(main !== undefined)
    assert.equal(main.scheduling, w.scheduling)
    const others = all.filter((t) => t.tid !== w.pid)
    assert.ok(others.length > 0, 'a Node process has threads besides its main one')
    for (const t of others) assert.equal(t.scheduling, ours, `thread ${t.tid}`)
    if (process.getuid?.() === 0) assert.equal(w.scheduling, 'SCHED_FIFO 50')
    if (cpu !== undefined) for (const t of all) assert.equal(t.cpus, String(cpu), `thread ${t.tid}`)
    assert.equal(w.cpu, cpu)
    const c = await w.count()
    assert.ok(c.ticks >= 1)
  })
}
