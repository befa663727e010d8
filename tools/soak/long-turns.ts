/**
 * What the server's long turns were made of: sets the long turns that tools/soak/report-memory.mjs
 * wrote (SOAK_SERVER_TURNS_FILE) beside the CPU profiles of the same processes
 * (SOAK_SERVER_CPU_PROF), and attributes the profile's samples that fall inside each long turn.
 *
 *   npx tsx tools/soak/long-turns.ts --turns FILE --profiles DIR [--kinds cpu,cpu-gc] [--top 20]
 *                                    [--from-s S] [--list]
 *   npx tsx tools/soak/long-turns.ts --turns FILE --profile FILE ...
 *
 * `--profile FILE` takes one profile of one process, whatever its name, with every turn of the
 * file: bench/data/throughput.ts writes its latency runs' loop stalls that way (BENCH_PROFILE with
 * BENCH_RUN_TRACE=1), their kinds the stalls' causes (`running`, `GC`, `no CPU`, `asleep`,
 * `file call`).
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
    kinds: { type: 'string', default: 'cpu,cpu-gc' },
    top: { type: 'string', default: '20' },
    'from-s': { type: 'string', default: '0' },
    list: { type: 'boolean', default: false },
  },
})
if (values.turns === undefined || (values.profiles === undefined) === (values.profile === undefined)) {
  console.error(
    'usage: long-turns --turns FILE (--profiles DIR | --profile FILE) [--kinds cpu,cpu-gc] [--top 20]',
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

const isOwn = (url: string) => url.includes('/src/') && !url.includes('node_modules')
const short = (n: ProfileNode) => {
  const f = n.callFrame
  // Sources compiled by tsx report line 0 for every function: the file name alone then.
  const line = f.lineNumber > 0 ? `:${f.lineNumber + 1}` : ''
  const file = f.url === '' ? '' : ` ${f.url.slice(f.url.lastIndexOf('/') + 1)}${line}`
  return `${f.functionName === '' ? '(anonymous)' : f.functionName}${file}`
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
