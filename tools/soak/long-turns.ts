/**
 * What the server's long turns were made of: sets the long turns that tools/soak/report-memory.mjs
 * wrote (SOAK_SERVER_TURNS_FILE) beside the CPU profiles of the same processes
 * (SOAK_SERVER_CPU_PROF), and attributes the profile's samples that fall inside each long turn.
 *
 *   npx tsx tools/soak/long-turns.ts --turns FILE --profiles DIR [--kinds cpu,cpu-gc] [--top 20]
 *                                    [--from-s S] [--list]
 *   npx tsx tools/soak/long-turns.ts --turns FILE --profile FILE ...
 *   npx tsx tools/soak/long-turns.ts --turns FILE --sched FILE [--steal FILE] [--load-pid PID]
 *                                    [--kinds 'no CPU,running'] [--stacks FILE [--runs FILE]]
 *
 * `--profile FILE` takes one profile of one process, whatever its name, with every turn of the
 * file: bench/data/throughput.ts writes its latency runs' loop stalls that way (BENCH_PROFILE with
 * BENCH_RUN_TRACE=1), their kinds the stalls' causes (`running`, `GC`, `no CPU`, `asleep`,
 * `file call`).
 *
 * `--sched FILE` sets the turns beside the kernel's scheduler trace of the same run instead
 * (tools/soak/sched.ts): for every chosen turn, who held each CPU inside it, the server's main
 * thread on a CPU and waiting for one by the kernel's account, and each vCPU's steal; then the
 * CPUs' time inside the chosen turns by kind of turn and group of holder, and by holder
 * (`--list` prints each turn). `--load-pid` names the load's process (the server's
 * forked child in bench/data/throughput.ts). `--stacks FILE` adds a sampled profile of the
 * server's threads with kernel stacks and page faults taken beside the trace (sched.ts's
 * readSamples): what the main thread ran inside each turn and by kind of turn (JavaScript, V8's
 * GC, a page fault and what in it, a system call); `--runs FILE` (throughput.ts's
 * latency-runs.jsonl) then gives, for each run, the server's threads' CPU µs a batch by what they
 * ran, the main thread, the threadpool and the other threads apart.
 *
 * Prints, per process: the long turns by kind (on-CPU, on-CPU in GC, waiting for a core, other),
 * then for the turns of the chosen kinds (default: on-CPU, both) the samples by leaf function, by
 * the innermost function of the server's own sources (src/), by the outermost one (what the loop
 * called: a socket read, a timer, an immediate), and the turns by the innermost src/ function that
 * most of their samples ran in. `--from-s S` leaves out each process's first S seconds (the set-up's
 * joins, a restart's start-up); `--list` prints every chosen turn with what it ran most. Both
 * clocks are the monotonic clock in µs.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import {
  fileLines,
  group,
  heldDuring,
  readSamples,
  readSched,
  readSteal,
  type Sample,
  stealDuring,
} from './sched.js'

interface Turn {
  readonly pid: number
  readonly kind: string
  /** ms since the process started (performance.now()). */
  readonly at: number
  readonly hrUs: number
  readonly ms: number
  readonly cpuMs: number
  readonly waitMs: number
  readonly gcMs: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: {
    readonly functionName: string
    readonly url: string
    readonly lineNumber: number
  }
  readonly children?: number[]
}

interface Profile {
  readonly nodes: ProfileNode[]
  readonly startTime: number
  readonly samples: number[]
  readonly timeDeltas: number[]
}

const { values } = parseArgs({
  options: {
    turns: { type: 'string' },
    profiles: { type: 'string' },
    profile: { type: 'string' },
    sched: { type: 'string' },
    steal: { type: 'string' },
    'load-pid': { type: 'string' },
    kinds: { type: 'string', default: 'cpu,cpu-gc' },
    top: { type: 'string', default: '20' },
    'from-s': { type: 'string', default: '0' },
    list: { type: 'boolean', default: false },
    stacks: { type: 'string' },
    runs: { type: 'string' },
  },
})
const sources = [values.profiles, values.profile, values.sched].filter((v) => v !== undefined)
if (values.turns === undefined || sources.length !== 1) {
  console.error(
    'usage: long-turns --turns FILE (--profiles DIR | --profile FILE | --sched FILE [--steal FILE]) [--kinds cpu,cpu-gc] [--top 20]',
  )
  process.exit(2)
}
const kinds = new Set(values.kinds.split(','))
const top = Number(values.top)
const fromMs = 1000 * Number(values['from-s'])

const turns: Turn[] = readFileSync(values.turns, 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => JSON.parse(l) as Turn)

if (values.sched !== undefined) {
  const trace = readSched(readFileSync(values.sched, 'utf8'))
  const steal = values.steal === undefined ? [] : readSteal(readFileSync(values.steal, 'utf8'))
  const serverPid = turns[0]?.pid ?? -1
  const loadPid = Number(values['load-pid'] ?? -1)
  const chosen = turns.filter((t) => kinds.has(t.kind) && t.at >= fromMs && t.hrUs >= trace.from)
  console.log(
    `server ${serverPid}, load ${loadPid}: ${chosen.length} turns of ${[...kinds].join(', ')} inside the trace (${turns.length} in all)`,
  )
  const total = new Map<string, number>()
  /** By kind: both CPUs' µs by group, and how many turns each group held the most in (main and idle aside). */
  const byKind = new Map<
    string,
    {
      n: number
      us: Map<string, number>
      most: Map<string, number>
      ran: number
      waited: number
      idle: number
      unseen: number
      stolen: number
    }
  >()
  const ms = (us: number) => (us / 1000).toFixed(1)
  const samples = values.stacks === undefined ? [] : readSamples(fileLines(values.stacks))
  const cpuSamples = samples.filter((x) => x.event === 'cpu-clock')
  const faults = samples.filter((x) => x.event.startsWith('exceptions:page_fault'))
  /** By kind of turn: the main thread's sampled µs by what it ran, and its page faults. */
  const ranBy = new Map<string, { us: Map<string, number>; faults: number }>()
  for (const t of chosen) {
    const held = heldDuring(trace, t.hrUs, t.hrUs + t.ms * 1000, serverPid, loadPid)
    const k = byKind.get(t.kind) ?? {
      n: 0,
      us: new Map(),
      most: new Map(),
      ran: 0,
      waited: 0,
      idle: 0,
      unseen: 0,
      stolen: 0,
    }
    byKind.set(t.kind, k)
    k.n++
    k.ran += held.mainRanUs
    k.waited += held.mainWaitedUs
    k.idle += held.mainWaitedIdleUs
    // On a CPU by the kernel's switches but not by the thread's own schedstat, which leaves out
    // the time the host took the vCPU (steal): a stolen vCPU looks like running from the trace.
    if (Number.isFinite(t.cpuMs)) k.unseen += Math.max(0, held.mainRanUs - t.cpuMs * 1000)
    const groups = new Map<string, number>()
    const cpus = held.cpus.map((by, cpu) => {
      for (const [h, us] of by) {
        countInto(total, h, us)
        countInto(k.us, group(h), us)
        countInto(groups, group(h), us)
      }
      const list = [...by]
        .sort((a, b) => b[1] - a[1])
        .map(([h, us]) => `${h} ${ms(us)}`)
        .join(', ')
      return `CPU${cpu}: ${list}`
    })
    const others = [...groups]
      .filter(([g]) => g !== 'server main' && g !== 'idle')
      .sort((a, b) => b[1] - a[1])
    if (others.length > 0) countInto(k.most, others[0][0])
    const stolen = stealDuring(steal, t.hrUs, t.hrUs + t.ms * 1000)
    k.stolen += stolen.reduce((a, b) => a + b, 0)
    let ran = ''
    if (values.stacks !== undefined) {
      const to = t.hrUs + t.ms * 1000
      const r = ranBy.get(t.kind) ?? { us: new Map<string, number>(), faults: 0 }
      ranBy.set(t.kind, r)
      const mine = new Map<string, number>()
      for (const x of between(cpuSamples, t.hrUs, to))
        if (x.tid === serverPid) countInto(mine, x.what, x.period / 1000)
      for (const [what, us] of mine) countInto(r.us, what, us)
      const nFaults = between(faults, t.hrUs, to).filter((x) => x.tid === serverPid).length
      r.faults += nFaults
      ran = `\n    main thread sampled: ${
        [...mine]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 5)
          .map(([w, us]) => `${w} ${ms(us)}`)
          .join('; ') || 'nothing'
      }; page faults ${nFaults}`
    }
    if (values.list)
      console.log(
        `  at ${(t.at / 1000).toFixed(2)} s: ${t.kind} ${t.ms.toFixed(1)} ms (schedstat: CPU ${t.cpuMs.toFixed(1)}, waiting ${t.waitMs.toFixed(1)}; kernel trace: ran ${ms(held.mainRanUs)}, waited ${ms(held.mainWaitedUs)}, a CPU idle meanwhile ${ms(held.mainWaitedIdleUs)})${stolen.length === 0 ? '' : `; steal ${stolen.join(' / ')} ms`}\n    ${cpus.join('\n    ')}${ran}`,
      )
  }
  for (const [kind, k] of byKind) {
    const all = [...k.us.values()].reduce((a, b) => a + b, 0)
    console.log(
      `\n${kind}: ${k.n} turns, both CPUs ${ms(all)} ms; the main thread ran ${ms(k.ran)} ms and waited for a CPU ${ms(k.waited)} ms in them (a CPU idle meanwhile ${ms(k.idle)} ms; on a CPU by the trace, not by its schedstat ${ms(k.unseen)} ms)${steal.length === 0 ? '' : `; steal ${k.stolen} ms (both vCPUs, by 10 ms ticks)`}`,
    )
    for (const [g, us] of [...k.us].sort((a, b) => b[1] - a[1]))
      console.log(
        `    ${g.padEnd(22)} ${ms(us).padStart(8)} ms ${((100 * us) / all).toFixed(1).padStart(5)} %  held the most (main, idle aside) in ${k.most.get(g) ?? 0}`,
      )
  }
  const all = [...total.values()].reduce((a, b) => a + b, 0)
  printTop(
    'both CPUs inside the chosen turns, ms by holder',
    new Map([...total].map(([h, us]) => [h, Math.round(us / 1000)])),
    all / 1000,
  )
  for (const [kind, r] of ranBy) {
    const sum = [...r.us.values()].reduce((a, b) => a + b, 0)
    printTop(
      `${kind}: the main thread's sampled ms by what it ran (${ms(sum)} ms; page faults ${r.faults})`,
      new Map([...r.us].map(([w, us]) => [w, Number(ms(us))])),
      sum / 1000,
    )
  }
  if (values.runs !== undefined) {
    const runs = readFileSync(values.runs, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { run: number; fromUs: number; toUs: number; batches: number })
    for (const run of runs) {
      const n = Math.max(1, run.batches)
      const byThreads = new Map<string, Map<string, number>>()
      const faultsBy = new Map<string, number>()
      const faultSites = new Map<string, Map<string, number>>()
      const threadsOf = (tid: number) =>
        tid === serverPid ? 'main thread' : trace.fileThreads.has(tid) ? 'threadpool' : 'other threads'
      // The server's threads only: the load processes it forks during the profile are followed too.
      for (const x of between(cpuSamples, run.fromUs, run.toUs)) {
        if (x.pid !== serverPid) continue
        const g = threadsOf(x.tid)
        const m = byThreads.get(g) ?? new Map<string, number>()
        byThreads.set(g, m)
        countInto(m, x.what, x.period / 1000 / n)
      }
      for (const x of between(faults, run.fromUs, run.toUs)) {
        if (x.pid !== serverPid) continue
        countInto(faultsBy, threadsOf(x.tid), 1 / n)
        const m = faultSites.get(threadsOf(x.tid)) ?? new Map<string, number>()
        faultSites.set(threadsOf(x.tid), m)
        countInto(m, x.what, 1 / n)
      }
      console.log(`\nrun ${run.run}: ${run.batches} batches; the server's threads, sampled CPU µs a batch`)
      for (const [g, m] of [...byThreads].sort((a, b) => a[0].localeCompare(b[0]))) {
        const sum = [...m.values()].reduce((a, b) => a + b, 0)
        console.log(
          `  ${g}: ${sum.toFixed(1)} µs a batch, page faults ${(faultsBy.get(g) ?? 0).toFixed(2)} a batch`,
        )
        for (const [w, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
          console.log(`    ${us.toFixed(2).padStart(7)}  ${w}`)
        for (const [w, k] of [...(faultSites.get(g) ?? [])].sort((a, b) => b[1] - a[1]).slice(0, 4))
          console.log(`    page faults ${k.toFixed(2)} a batch ${w}`)
      }
    }
  }
  process.exit(0)
}

const isOwn = (url: string) => url.includes('/src/') && !url.includes('node_modules')
const short = (n: ProfileNode) => {
  const f = n.callFrame
  // Sources compiled by tsx report line 0 for every function: the file name alone then.
  const line = f.lineNumber > 0 ? `:${f.lineNumber + 1}` : ''
  const file = f.url === '' ? '' : ` ${f.url.slice(f.url.lastIndexOf('/') + 1)}${line}`
  return `${f.functionName === '' ? '(anonymous)' : f.functionName}${file}`
}

/** The samples (in time order) from `from` to `to`, µs on the monotonic clock. */
function between(samples: readonly Sample[], from: number, to: number): Sample[] {
  const first = samples.findIndex((x) => x.at >= from)
  const out: Sample[] = []
  for (let i = Math.max(0, first); first >= 0 && i < samples.length && samples[i].at < to; i++)
    out.push(samples[i])
  return out
}

function countInto(m: Map<string, number>, k: string, n = 1): void {
  m.set(k, (m.get(k) ?? 0) + n)
}

function printTop(title: string, m: Map<string, number>, total: number): void {
  console.log(`\n  ${title}`)
  for (const [k, n] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`    ${String(n).padStart(6)}  ${((100 * n) / total).toFixed(1).padStart(5)} %  ${k}`)
}

// CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread, the one whose
// turns the server's preload measures (the others are workers: tsx's loader, SQLite's checkpoint).
const mainThread = (f: string) => f.endsWith('.cpuprofile') && f.split('.')[4] === '0'
const profiles: { name: string; path: string; mine: Turn[] }[] =
  values.profile !== undefined
    ? [{ name: values.profile, path: values.profile, mine: turns }]
    : readdirSync(values.profiles as string)
        .filter(mainThread)
        .map((name) => ({
          name,
          path: join(values.profiles as string, name),
          mine: turns.filter((t) => t.pid === Number(name.split('.')[3])),
        }))
for (const { name, path, mine } of profiles) {
  const byKind = new Map<string, number>()
  for (const t of mine) countInto(byKind, t.kind)
  console.log(`\n${name}: ${mine.length} long turns (${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')})`)
  const chosen = mine.filter((t) => kinds.has(t.kind) && t.at >= fromMs).sort((a, b) => a.hrUs - b.hrUs)
  if (chosen.length === 0) continue
  const ms = chosen.map((t) => t.ms).sort((a, b) => a - b)
  console.log(
    `  chosen (${[...kinds].join(', ')}): ${chosen.length}, length median ${ms[Math.floor(ms.length / 2)].toFixed(1)} ms, ` +
      `longest ${ms[ms.length - 1].toFixed(1)} ms; CPU in them ${chosen.reduce((a, t) => a + t.cpuMs, 0).toFixed(0)} ms, ` +
      `GC in them ${chosen.reduce((a, t) => a + t.gcMs, 0).toFixed(0)} ms`,
  )

  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile
  const byId = new Map<number, ProfileNode>()
  const parent = new Map<number, number>()
  for (const n of profile.nodes) {
    byId.set(n.id, n)
    for (const c of n.children ?? []) parent.set(c, n.id)
  }
  const stackOf = (id: number): ProfileNode[] => {
    const s: ProfileNode[] = []
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      s.push(byId.get(at) as ProfileNode)
    return s // leaf first
  }
  const leaf = new Map<string, number>()
  const inner = new Map<string, number>()
  const outer = new Map<string, number>()
  const turnsBy = new Map<string, number>()
  let inTurns = 0
  let t = profile.startTime
  let k = 0
  let current: Map<string, number> | undefined
  const closeTurn = () => {
    if (current === undefined || current.size === 0) return
    const [dominant, n] = [...current].sort((a, b) => b[1] - a[1])[0]
    countInto(turnsBy, dominant)
    if (values.list) {
      const c = chosen[k]
      console.log(
        `  at ${(c.at / 1000).toFixed(1)} s: ${c.kind} ${c.ms.toFixed(1)} ms (CPU ${c.cpuMs.toFixed(1)}, waiting ${c.waitMs.toFixed(1)}, GC ${c.gcMs.toFixed(1)}): ${dominant} ${n} of ${[...current.values()].reduce((a, b) => a + b, 0)} samples`,
      )
    }
  }
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]
    while (k < chosen.length && t > chosen[k].hrUs + chosen[k].ms * 1000) {
      closeTurn()
      current = undefined
      k++
    }
    if (k >= chosen.length) break
    if (t < chosen[k].hrUs) continue
    current ??= new Map()
    const stack = stackOf(profile.samples[i])
    inTurns++
    countInto(leaf, short(stack[0]))
    const own = stack.filter((n) => isOwn(n.callFrame.url))
    const innermost = own.length > 0 ? short(own[0]) : `(no src/ frame) ${short(stack[0])}`
    countInto(inner, innermost)
    countInto(current, innermost)
    countInto(outer, own.length > 0 ? short(own[own.length - 1]) : innermost)
  }
  closeTurn()
  console.log(`  samples inside them: ${inTurns}`)
  printTop('by leaf function', leaf, inTurns)
  printTop('by innermost src/ function', inner, inTurns)
  printTop('by outermost src/ function (what the loop called)', outer, inTurns)
  printTop('turns by the innermost src/ function most of their samples ran in', turnsBy, chosen.length)
}
