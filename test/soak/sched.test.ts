// The kernel's scheduler trace set beside a run's long turns (tools/soak/sched.ts): who held each
// CPU inside an interval, and the server's main thread's time on a CPU and waiting for one.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { heldDuring, holder, readSched, readSteal, stealDuring } from '../../tools/soak/sched.js'

// `perf script -F comm,tid,pid,cpu,time,event,trace --ns` lines; the server is pid 100 (its
// threadpool thread 104), the load pid 200, times in s on the monotonic clock.
const line = (comm: string, pid: number, tid: number, cpu: number, s: number, ev: string, rest: string) =>
  `${comm.padStart(16)} ${pid}/${tid} [00${cpu}] ${s.toFixed(9)}: ${ev}: ${rest}`
const sw = (prev: [string, number, string], next: [string, number]) =>
  `prev_comm=${prev[0]} prev_pid=${prev[1]} prev_prio=120 prev_state=${prev[2]} ==> next_comm=${next[0]} next_pid=${next[1]} next_prio=120`
const TRACE = [
  // CPU0: the server's main thread until 1.000, preempted by the load; back at 1.006.
  line('node', 100, 100, 0, 1.0, 'sched:sched_switch', sw(['node', 100, 'R'], ['node', 200])),
  line('node', 200, 200, 0, 1.006, 'sched:sched_switch', sw(['node', 200, 'S'], ['node', 100])),
  // CPU1: the threadpool reads ahead from 0.999 to 1.004, then kworker until 1.005, then idle.
  line(
    'node',
    100,
    104,
    1,
    0.999,
    'syscalls:sys_enter_pread64',
    'fd: 0x1, buf: 0x0, count: 0x100000, pos: 0x0',
  ),
  line('node', 100, 104, 1, 1.004, 'sched:sched_switch', sw(['node', 104, 'S'], ['kworker/1:2', 50])),
  line('kworker/1:2', 50, 50, 1, 1.005, 'sched:sched_switch', sw(['kworker/1:2', 50, 'I'], ['swapper/1', 0])),
  // The V8 helper woken and run on CPU1 from 1.007.
  line('swapper/1', 0, 0, 1, 1.0065, 'sched:sched_wakeup', 'comm=node pid=105 prio=120 target_cpu=001'),
  line('swapper/1', 0, 0, 1, 1.007, 'sched:sched_switch', sw(['swapper/1', 0, 'R'], ['node', 105])),
  line('node', 100, 105, 1, 1.009, 'sched:sched_switch', sw(['node', 105, 'S'], ['swapper/1', 0])),
  line('swapper/1', 0, 0, 1, 1.01, 'sched:sched_switch', sw(['swapper/1', 0, 'R'], ['node', 300])),
  line('node', 300, 300, 1, 1.011, 'sched:sched_switch', sw(['node', 300, 'S'], ['swapper/1', 0])),
].join('\n')

test('readSched: what ran on each CPU, the threads that read or synced, and the waits', () => {
  const t = readSched(TRACE)
  assert.deepEqual(
    t.cpus[0].map((s) => [s.tid, Math.round(s.from - 1e6), Math.round(s.to - 1e6)]),
    [
      [100, -1000, 0], // from the trace's first event
      [200, 0, 6000],
      [100, 6000, 11000], // to its last
    ],
  )
  assert.deepEqual([...t.fileThreads], [104])
  // Preempted at 1.000, back at 1.006; the helper woken at 1.0065, run at 1.007.
  assert.deepEqual(
    t.waits.get(100)?.map((w) => [Math.round(w.from - 1e6), Math.round(w.to - 1e6)]),
    [[0, 6000]],
  )
  assert.deepEqual(
    t.waits.get(105)?.map((w) => [Math.round(w.from - 1e6), Math.round(w.to - 1e6)]),
    [[6500, 7000]],
  )
})

test('holder: the server by thread, the load, kernel threads by kind, others by name and pid', () => {
  const t = readSched(TRACE)
  assert.equal(holder(t, 100, 100, 200), 'server main')
  assert.equal(holder(t, 104, 100, 200), 'server threadpool')
  assert.equal(holder(t, 105, 100, 200), 'server other threads')
  assert.equal(holder(t, 200, 100, 200), 'load process')
  assert.equal(holder(t, 50, 100, 200), 'kworker')
  assert.equal(holder(t, 300, 100, 200), 'node 300')
  assert.equal(holder(t, 0, 100, 200), 'idle')
})

test('heldDuring: each CPU by holder, and the main thread ran and waited, inside the interval', () => {
  const t = readSched(TRACE)
  const h = heldDuring(t, 1.0e6 - 500, 1.008e6, 100, 200)
  const round = (m: Map<string, number>) => Object.fromEntries([...m].map(([k, v]) => [k, Math.round(v)]))
  assert.deepEqual(round(h.cpus[0]), { 'server main': 2500, 'load process': 6000 })
  assert.deepEqual(round(h.cpus[1]), {
    'server threadpool': 4500,
    kworker: 1000,
    idle: 2000,
    'server other threads': 1000,
  })
  assert.equal(Math.round(h.mainRanUs), 2500)
  assert.equal(Math.round(h.mainWaitedUs), 6000)
  // CPU1 idle from 1.005 to 1.007 while the main thread waited (1.000 to 1.006).
  assert.equal(Math.round(h.mainWaitedIdleUs), 1000)
})

test('stealDuring: ticks of 10 ms between the samples around the interval', () => {
  const s = readSteal('1000 5 7\n11000 5 8\n21000 6 8\n31000 9 8\n')
  assert.deepEqual(stealDuring(s, 12000, 20000), [10, 0])
  assert.deepEqual(stealDuring(s, 12000, 25000), [40, 0])
  assert.deepEqual(stealDuring(s, 1000, 31000), [40, 10])
})
