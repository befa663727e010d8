/**
 * The kernel's scheduler trace of a run, set beside its long turns (tools/soak/long-turns.ts
 * `--sched`): who held each CPU inside a turn, how long the server's main thread ran and waited
 * for a CPU by the kernel's account, and how much of each vCPU the host took (steal).
 *
 * The trace is `perf script -F comm,tid,pid,cpu,time,event,trace --ns` of
 * `perf record -e sched:sched_switch -e sched:sched_wakeup -e sched:sched_wakeup_new
 * -e syscalls:sys_enter_pread64 -e syscalls:sys_enter_fsync -e syscalls:sys_enter_fdatasync -a -k
 * mono`: with `-k mono` its times are the monotonic clock, the turns' `hrUs`. Node's threads all
 * bear the process's name, so the server's threadpool threads are told by what they do: those
 * of its threads other than the main one that entered `pread64` or `fsync` (the reads ahead, the
 * write-back, Fetch reads); its other threads are V8's helpers and Node's own. The steal file, optional,
 * has one line a sample: the monotonic clock in µs, then each CPU's steal from /proc/stat (USER_HZ
 * ticks, 10 ms each).
 */

import { closeSync, openSync, readSync } from 'node:fs'

interface Span {
  readonly from: number
  readonly to: number
  readonly tid: number
}

export interface SchedTrace {
  /** What ran on each CPU, µs on the monotonic clock (tid 0: idle). */
  readonly cpus: Span[][]
  /** Each thread's process (tgid), where the trace showed it, and its name. */
  readonly pidOf: Map<number, number>
  readonly comm: Map<number, string>
  /** Each thread's intervals runnable and not running (woken or preempted, until switched in). */
  readonly waits: Map<number, { from: number; to: number }[]>
  /** The threads that entered a `pread64`, `fsync` or `fdatasync`. */
  readonly fileThreads: Set<number>
  readonly from: number
  readonly to: number
}

const LINE = /^\s*(.+?)\s+(\d+)\/(\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s+\w+:(\w+):\s*(.*)$/
const SWITCH =
  /^prev_comm=(.*) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+)/
const WAKEUP = /^comm=(.*) pid=(\d+) prio=\d+ target_cpu=\d+/

export function readSched(text: string): SchedTrace {
  const cpus: Span[][] = []
  const running: { tid: number; from: number }[] = []
  const pidOf = new Map<number, number>()
  const comm = new Map<number, string>()
  const waits = new Map<number, { from: number; to: number }[]>()
  const waitingSince = new Map<number, number>()
  const fileThreads = new Set<number>()
  // In time order (perf script's own, unless the input was merged), the first event the trace's start.
  const events = text
    .split('\n')
    .map((l) => LINE.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ m, at: Number(m[5]) * 1e6 }))
    .sort((a, b) => a.at - b.at)
  const first = events[0]?.at ?? 0
  const last = events[events.length - 1]?.at ?? 0
  for (const { m, at } of events) {
    const [, , pid, tid, cpuText, , event, rest] = m
    const cpu = Number(cpuText)
    if (Number(tid) !== 0) pidOf.set(Number(tid), Number(pid))
    if (event.startsWith('sys_enter_')) fileThreads.add(Number(tid))
    else if (event === 'sched_switch') {
      const s = SWITCH.exec(rest)
      if (s === null) continue
      const prev = Number(s[2])
      const next = Number(s[5])
      comm.set(prev, s[1])
      comm.set(next, s[4])
      cpus[cpu] ??= []
      const r = running[cpu]
      // The trace's first switch on a CPU: its previous task ran from the trace's start.
      cpus[cpu].push({ from: r?.from ?? first, to: at, tid: prev })
      running[cpu] = { tid: next, from: at }
      // Preempted (still runnable): waiting for a CPU from now.
      if (prev !== 0 && (s[3] === 'R' || s[3] === 'R+')) waitingSince.set(prev, at)
      const since = waitingSince.get(next)
      if (since !== undefined) {
        waitingSince.delete(next)
        const w = waits.get(next) ?? []
        w.push({ from: since, to: at })
        waits.set(next, w)
      }
    } else if (event === 'sched_wakeup' || event === 'sched_wakeup_new') {
      const w = WAKEUP.exec(rest)
      if (w === null) continue
      comm.set(Number(w[2]), w[1])
      if (!waitingSince.has(Number(w[2]))) waitingSince.set(Number(w[2]), at)
    }
  }
  running.forEach((r, cpu) => {
    cpus[cpu].push({ from: r.from, to: last, tid: r.tid })
  })
  return { cpus, pidOf, comm, waits, fileThreads, from: first, to: last }
}

const overlap = (a0: number, a1: number, b0: number, b1: number) =>
  Math.max(0, Math.min(a1, b1) - Math.max(a0, b0))

/**
 * Who a thread is: the server's main thread, its threadpool, its other threads; the load process
 * (every thread of it); a kernel thread by the name before its `/` (kworker, ksoftirqd, kswapd0,
 * …); any other process by its name and pid; `idle`.
 */
export function holder(trace: SchedTrace, tid: number, serverPid: number, loadPid: number): string {
  if (tid === 0) return 'idle'
  const pid = trace.pidOf.get(tid)
  const name = trace.comm.get(tid) ?? `tid ${tid}`
  if (pid === serverPid || tid === serverPid) {
    if (tid === serverPid) return 'server main'
    if (trace.fileThreads.has(tid)) return 'server threadpool'
    return 'server other threads'
  }
  if (pid === loadPid) return 'load process'
  // kworker/1:2H-kblockd, ksoftirqd/0, migration/1: one kind of kernel thread.
  if (name.includes('/')) return name.split('/')[0]
  return `${name} ${pid ?? tid}`
}

/**
 * A holder's group: the server's main thread, threadpool and other threads, the load process,
 * the kernel's threads (by their kinds), the tracer (`perf`), idle, or another process.
 */
export function group(holder: string): string {
  if (holder.startsWith('server ') || holder === 'load process' || holder === 'idle') return holder
  if (holder.startsWith('perf ')) return 'perf'
  if (!/ \d+$/.test(holder) || /^(kswapd|kcompactd|kdamond|khugepaged|rcu_|kthreadd|jbd2)/.test(holder))
    return 'kernel threads'
  return 'other processes'
}

export interface Held {
  /** Per CPU: µs by holder inside the interval. */
  readonly cpus: Map<string, number>[]
  /** The main thread's µs on a CPU and runnable-waiting, by the kernel's trace. */
  readonly mainRanUs: number
  readonly mainWaitedUs: number
  /** Of its wait, the µs in which another CPU was idle (CPUs summed): a wake-up not yet placed. */
  readonly mainWaitedIdleUs: number
}

export function heldDuring(
  trace: SchedTrace,
  from: number,
  to: number,
  serverPid: number,
  loadPid: number,
): Held {
  let mainRanUs = 0
  const cpus = trace.cpus.map((spans) => {
    const by = new Map<string, number>()
    for (const s of spans) {
      const us = overlap(s.from, s.to, from, to)
      if (us === 0) continue
      const h = holder(trace, s.tid, serverPid, loadPid)
      by.set(h, (by.get(h) ?? 0) + us)
      if (s.tid === serverPid) mainRanUs += us
    }
    return by
  })
  let mainWaitedUs = 0
  let mainWaitedIdleUs = 0
  for (const w of trace.waits.get(serverPid) ?? []) {
    const a = Math.max(w.from, from)
    const b = Math.min(w.to, to)
    if (b <= a) continue
    mainWaitedUs += b - a
    for (const spans of trace.cpus)
      for (const s of spans) if (s.tid === 0) mainWaitedIdleUs += overlap(s.from, s.to, a, b)
  }
  return { cpus, mainRanUs, mainWaitedUs, mainWaitedIdleUs }
}

/** Steal samples: the monotonic clock (µs) and each CPU's steal ticks. */
export function readSteal(text: string): { at: number; ticks: number[] }[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [at, ...ticks] = l.split(' ').map(Number)
      return { at, ticks }
    })
}

/** Each CPU's steal (ms, 10 ms a tick) between the samples just before `from` and just after `to`. */
export function stealDuring(
  samples: readonly { at: number; ticks: number[] }[],
  from: number,
  to: number,
): number[] {
  let a = 0
  while (a + 1 < samples.length && samples[a + 1].at <= from) a++
  let b = a
  while (b + 1 < samples.length && samples[b].at < to) b++
  if (samples.length === 0) return []
  return samples[b].ticks.map((t, cpu) => 10 * (t - samples[a].ticks[cpu]))
}

/**
 * One sample of `perf record -e cpu-clock/freq=4999/ -e exceptions:page_fault_user -e
 * exceptions:page_fault_kernel -g -p <server pid> -k mono`, as `perf script -F
 * comm,tid,pid,time,period,event,trace,ip,sym --ns` prints it: the thread, the monotonic clock in
 * µs, the event, its period (ns of CPU for cpu-clock), and what its call stack ran ({@link
 * whatRan}; JIT frames named where the server ran with `--perf-basic-prof`).
 */
export interface Sample {
  readonly tid: number
  readonly pid: number
  readonly at: number
  readonly event: string
  readonly period: number
  readonly what: string
}

const SAMPLE = /^\s*(.+?)\s+(\d+)\/(\d+)\s+(\d+\.\d+):\s+(\d+)\s+(\S+):(?:\s+(.*))?$/
const FRAME = /^\s+[0-9a-f]+\s+(.*)$/

/**
 * The samples of a `perf script` output, line by line (a second's profile with every page fault
 * is over 50 MB of text), in time order; the tracer's own page faults left out ({@link
 * tracersFault}).
 */
export function readSamples(lines: Iterable<string>): Sample[] {
  const out: Sample[] = []
  let head: { m: RegExpExecArray; stack: string[] } | undefined
  const close = () => {
    if (head === undefined) return
    const { m, stack } = head
    const event = m[6].split('/')[0]
    if (!tracersFault(event, m[7] ?? ''))
      out.push({
        pid: Number(m[2]),
        tid: Number(m[3]),
        at: Number(m[4]) * 1e6,
        period: Number(m[5]),
        event,
        what: event.startsWith('exceptions:page_fault') ? faultSite(stack) : whatRan(stack),
      })
    head = undefined
  }
  for (const l of lines) {
    const m = SAMPLE.exec(l)
    if (m !== null) {
      close()
      head = { m, stack: [] }
      continue
    }
    const f = FRAME.exec(l)
    if (f !== null) head?.stack.push(f[1])
  }
  close()
  return out.sort((a, b) => a.at - b.at)
}

/** A file's lines, read a chunk at a time (the text can exceed a string's length). */
export function* fileLines(path: string): Generator<string> {
  const fd = openSync(path, 'r')
  const chunk = Buffer.allocUnsafe(1 << 24)
  let rest = ''
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null)
      if (n === 0) break
      const lines = (rest + chunk.toString('utf8', 0, n)).split('\n')
      rest = lines.pop() ?? ''
      yield* lines
    }
    if (rest !== '') yield rest
  } finally {
    closeSync(fd)
  }
}

/** A system call's entry in the kernel's stack: its name follows the prefix. */
const SYSCALL = /^(__x64_sys_|__do_sys_|__se_sys_|ksys_|__sys_)/

/**
 * A page fault the tracer's own stack walk took (a read of the user stack from the kernel that
 * faulted and was fixed up), not the program's.
 */
export function tracersFault(event: string, trace: string): boolean {
  return event === 'exceptions:page_fault_kernel' && /ip=(__get_user|copy_from_user_nmi)/.test(trace)
}

/**
 * Where a page fault was taken: in the kernel on the program's behalf (a system call writing into
 * a page not yet there: which call, which kernel function), or in the program's own code.
 */
export function faultSite(stack: readonly string[]): string {
  const sys = stack.find((f) => SYSCALL.test(f))
  const at = stack.find((f) => !/^(exc_page_fault|asm_exc_page_fault)/.test(f)) ?? '?'
  if (sys !== undefined) return `in syscall ${sys.replace(SYSCALL, '')} (${at})`
  return `in ${userSide(stack)}`
}

const GC =
  /v8::internal::(Heap::|Scavenger|ScavengeJob|MarkCompact|MinorMarkCompact|Sweeper|IncrementalMarking|ConcurrentMarking|GCTracer|ArrayBufferSweeper|MemoryAllocator|PagedSpace|NewSpace|SemiSpace)/
const JIT = /^(JS|LazyCompile|Function|Builtin|BytecodeHandler|Stub|Interpreted|RegExp|Script|Eval|Handler):/

/** The program's side of a stack: V8's GC, JavaScript (its innermost own frame), or native code. */
function userSide(stack: readonly string[]): string {
  const gc = stack.find((f) => GC.test(f))
  if (gc !== undefined) return `V8 GC (${/v8::internal::(\w+)/.exec(gc)?.[1] ?? '?'})`
  const user = stack.filter((f) => !/^(asm_|exc_|entry_|do_syscall|__x64_sys|ret_from)/.test(f))
  const js = user.filter((f) => JIT.test(f))
  if (js.length > 0) {
    const own = js.find((f) => /\/(src|dist)\//.test(f) && !f.includes('node_modules')) ?? js[0]
    // JS:*name file:///…/dist/src/x.js:12:3 → *name x.js:12
    const [name, where = ''] = own.replace(JIT, '').split(' ')
    return `JS ${name} ${where.slice(where.lastIndexOf('/') + 1).replace(/:\d+$/, '')}`.trim()
  }
  const leaf = user.find((f) => !f.startsWith('[unknown]'))
  return `native ${leaf === undefined ? '[unknown]' : leaf.replace(/\(.*$/, '').slice(0, 60)}`
}

/** The kernel's part, what it did that took time: reclaim, clearing or copying pages, allocation. */
function kernelDetail(stack: readonly string[]): string {
  if (stack.some((f) => /^(try_to_free_pages|shrink_|__alloc_pages_direct_reclaim)/.test(f)))
    return 'direct reclaim'
  if (stack.some((f) => /^(__alloc_pages_direct_compact|compact_zone)/.test(f))) return 'compaction'
  if (stack.some((f) => /^clear_page/.test(f))) return 'clearing a new page'
  if (
    stack.some((f) =>
      /^(copy_user|copyout|copyin|_copy_to_iter|_copy_from_iter|copy_page_to_iter|rep_movs)/.test(f),
    )
  )
    return 'copying'
  if (
    stack.some((f) => /^(__alloc_pages|alloc_pages|__folio_alloc|folio_alloc|get_page_from_freelist)/.test(f))
  )
    return 'page allocation'
  return stack[0]?.replace(/\.(isra|constprop|part)\..*$/, '') ?? '?'
}

/**
 * What a cpu-clock sample ran: a page fault (anonymous or file, and what in it took the time), a
 * system call (which, and what in it), another kernel entry (an interrupt), or the program's own
 * code (V8's GC, JavaScript, native), each with the program's side after `in`.
 */
export function whatRan(stack: readonly string[]): string {
  const user = userSide(stack)
  if (stack.includes('asm_exc_page_fault')) {
    const kind = stack.some((f) =>
      /^(do_anonymous_page|do_huge_pmd_anonymous_page|do_wp_page|wp_page_copy)/.test(f),
    )
      ? 'anonymous'
      : stack.some((f) => /^(filemap_fault|do_read_fault|do_shared_fault|do_cow_fault|__do_fault)/.test(f))
        ? 'file'
        : 'other'
    return `page fault (${kind}): ${kernelDetail(stack)} in ${user}`
  }
  const sys = stack.find((f) => SYSCALL.test(f))
  if (stack.includes('entry_SYSCALL_64_after_hwframe') || sys !== undefined)
    return `syscall ${sys?.replace(SYSCALL, '') ?? '?'}: ${kernelDetail(stack)}`
  const entry = stack.find((f) => /^asm_/.test(f))
  if (entry !== undefined) return `kernel ${entry.replace(/^asm_(sysvec_|common_)?/, '')}`
  return user
}
