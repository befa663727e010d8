// The kernel's scheduler trace set beside a run's long turns (tools/soak/sched.ts): who held each
// CPU inside an interval, and the server's main thread's time on a CPU and waiting for one.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  heldDuring,
  holder,
  readSamples,
  readSched,
  readSteal,
  stealDuring,
  whatRan,
} from '../../tools/soak/sched.js'

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

// `perf script -F comm,tid,pid,time,period,event,trace,ip,sym --ns` of cpu-clock samples and page
// faults with their call stacks, leaf first.
const STACKS = [
  'node 100/100 1.000100000:     200040         cpu-clock/freq=4999/: ',
  '\tffffffff8123 clear_page_erms',
  '\tffffffff8124 do_anonymous_page',
  '\tffffffff8125 handle_mm_fault',
  '\tffffffff8126 exc_page_fault',
  '\tffffffff8127 asm_exc_page_fault',
  '\t    55aa01 JS:*appendBatches file:///srv/dist/src/log/file.js:797:18',
  '\t    55aa02 JS:*append file:///srv/dist/src/log/partition-log.js:384:5',
  '',
  'node 100/104 1.000200000:     200040         cpu-clock/freq=4999/: ',
  '\tffffffff8130 __pi_memset',
  '\tffffffff8131 filemap_read',
  '\tffffffff8132 __x64_sys_pread64',
  '\tffffffff8133 do_syscall_64',
  '\tffffffff8134 entry_SYSCALL_64_after_hwframe',
  '\t     f6417 __libc_pread',
  '',
  'node 100/100 1.000300000:          1 exceptions:page_fault_kernel: address=0x0 ip=__get_user_nocheck_8 error_code=0x0',
  '',
  'node 100/100 1.000400000:          1   exceptions:page_fault_user: address=0x7f00 ip=0x55aa error_code=0x6',
  '\tffffffff8126 exc_page_fault',
  '\tffffffff8127 asm_exc_page_fault',
  '\t    55aa01 JS:*stageCopy file:///srv/dist/src/log/partition-log.js:92:3',
  '',
  'node 100/105 1.000500000:     200040         cpu-clock/freq=4999/: ',
  '\t    66bb01 v8::internal::ScavengerCollector::CollectGarbage',
  '\t    66bb02 v8::internal::Heap::CollectGarbage',
  '',
].join('\n')

test('readSamples: each sample by what it ran, without the tracer’s own page faults', () => {
  const samples = readSamples(STACKS.split('\n'))
  assert.deepEqual(
    samples.map((s) => [s.tid, s.event, s.period, s.what]),
    [
      [
        100,
        'cpu-clock',
        200040,
        'page fault (anonymous): clearing a new page in JS *appendBatches file.js:797',
      ],
      [104, 'cpu-clock', 200040, 'syscall pread64: __pi_memset'],
      [100, 'exceptions:page_fault_user', 1, 'in JS *stageCopy partition-log.js:92'],
      [105, 'cpu-clock', 200040, 'V8 GC (ScavengerCollector)'],
    ],
  )
  assert.equal(samples[0].at, 1_000_100)
  assert.equal(whatRan(['uv__io_poll', 'uv_run']), 'native uv__io_poll')
})
