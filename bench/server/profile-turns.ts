// What runs in the long event-loop turns of a .cpuprofile: the profile's samples laid out on its
// clock, split into busy stretches (consecutive samples that are not `(idle)`), and for the
// stretches of at least `min-ms`: how many there are, what started them (the first frame below the
// root: a socket read is `onStreamRead`, a timer `listOnTimeout`, `setImmediate` `processImmediate`,
// promise continuations `processTicksAndRejections`), self time by function and inclusive time of
// Topograph's functions inside them. A sample gap (the sampler itself descheduled) longer than
// `gap-ms` inside a stretch is counted apart: that stretch is the machine's, not the server's.
// Record with `BENCH_PROFILE_INTERVAL_US=100` so that a turn holds enough samples. With `each`
// (a fifth argument) every such stretch is also listed on its own: when it began (ms into the
// profile), its length and longest sample gap, what started it and its three heaviest frames by
// self time with the Topograph function they ran under.
//
//   npx tsx bench/server/profile-turns.ts <file.cpuprofile> [min-ms=4] [top=20] [gap-ms=2] [each]
import { readFileSync } from 'node:fs'

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: Node[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
  endTime: number
}
const [file, minArg, topArg, gapArg, eachArg] = process.argv.slice(2)
if (!file) {
  console.error('usage: profile-turns.ts <file.cpuprofile> [min-ms=4] [top=20] [gap-ms=2] [each]')
  process.exit(2)
}
const minUs = Number(minArg ?? 4) * 1000
const top = Number(topArg ?? 20)
const gapUs = Number(gapArg ?? 2) * 1000
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const root = profile.nodes[0].id

const short = (url: string) => url.replace(/^.*\/(src|node_modules)\//, '$1/')
const label = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`
const isIdle = (id: number) => byId.get(id)?.callFrame.functionName === '(idle)'
/** The frame right below the root: what the turn was started by. */
function entry(id: number): string {
  let cur = id
  for (let p = parent.get(cur); p !== undefined && p !== root; p = parent.get(cur)) cur = p
  return label(byId.get(cur) as Node)
}

// Sample i was taken at times[i]; it stands for the time until the next sample.
const n = profile.samples.length
const times: number[] = new Array(n)
let t = profile.startTime
for (let i = 0; i < n; i++) {
  t += profile.timeDeltas[i]
  times[i] = t
}
const weight = (i: number) => (i + 1 < n ? times[i + 1] - times[i] : 0)

interface Stretch {
  from: number
  to: number
  maxGap: number
}
const stretches: Stretch[] = []
let open: Stretch | null = null
for (let i = 0; i < n; i++) {
  if (isIdle(profile.samples[i])) {
    if (open !== null) {
      open.to = i
      // The stretch lasts until this sample: a gap before it is the stretch's last sample's.
      open.maxGap = Math.max(open.maxGap, profile.timeDeltas[i])
      stretches.push(open)
      open = null
    }
  } else if (open === null) open = { from: i, to: i, maxGap: 0 }
  if (open !== null && i > open.from) open.maxGap = Math.max(open.maxGap, profile.timeDeltas[i])
}
const us = (s: Stretch) => times[s.to] - times[s.from]
const busyUs = stretches.reduce((a, s) => a + us(s), 0)
const long = stretches.filter((s) => us(s) >= minUs)
const gappy = long.filter((s) => s.maxGap > gapUs)
const served = long.filter((s) => s.maxGap <= gapUs)
const total = (profile.endTime - profile.startTime) / 1000
const f1 = (x: number) => x.toFixed(1)
console.log(
  `${f1(total)} ms profiled, ${n} samples, busy ${f1(busyUs / 1000)} ms in ${stretches.length} stretches; ` +
    `${long.length} stretches ≥ ${minUs / 1000} ms (${f1(long.reduce((a, s) => a + us(s), 0) / 1000)} ms): ` +
    `${served.length} without a sample gap > ${gapUs / 1000} ms, ${gappy.length} with one`,
)
const lengths = served.map(us).sort((a, b) => b - a)
console.log(
  `longest without a gap (ms): ${lengths
    .slice(0, 15)
    .map((x) => f1(x / 1000))
    .join(', ')}`,
)

function summarize(title: string, set: readonly Stretch[]): void {
  if (set.length === 0) return
  const entries = new Map<string, number>()
  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let all = 0
  for (const s of set) {
    for (let i = s.from; i < s.to; i++) {
      const id = profile.samples[i]
      const w = weight(i)
      all += w
      const e = entry(id)
      entries.set(e, (entries.get(e) ?? 0) + w)
      const l = label(byId.get(id) as Node)
      self.set(l, (self.get(l) ?? 0) + w)
      const seen = new Set<string>()
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const c = byId.get(cur) as Node
        if (!c.callFrame.url.includes('/src/')) continue
        const cl = label(c)
        if (seen.has(cl)) continue
        seen.add(cl)
        inclusive.set(cl, (inclusive.get(cl) ?? 0) + w)
      }
    }
  }
  const show = (name: string, m: Map<string, number>) => {
    console.log(`\n${title}: ${name}`)
    for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
      console.log(`${f1((100 * v) / all).padStart(5)} %  ${k}`)
  }
  show('started by', entries)
  show('self time', self)
  show('inclusive time, functions in src/', inclusive)
}
summarize(`stretches ≥ ${minUs / 1000} ms without a gap`, served)

if (eachArg === 'each') {
  console.log(
    `\nevery stretch ≥ ${minUs / 1000} ms: at ms | ms | longest gap ms | started by | heaviest self frames (under)`,
  )
  /** The innermost Topograph function above a sample's frame. */
  const under = (id: number): string => {
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const c = byId.get(cur) as Node
      if (c.callFrame.url.includes('/src/')) return label(c)
    }
    return '-'
  }
  for (const s of long) {
    const self = new Map<string, number>()
    for (let i = s.from; i < s.to; i++) {
      const id = profile.samples[i]
      const k = `${label(byId.get(id) as Node)} (${under(id)})`
      self.set(k, (self.get(k) ?? 0) + weight(i))
    }
    const heavy = [...self]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([k, v]) => `${f1(v / 1000)} ${k}`)
      .join('; ')
    console.log(
      `${f1((times[s.from] - profile.startTime) / 1000)} | ${f1(us(s) / 1000)} | ${f1(s.maxGap / 1000)} | ${entry(profile.samples[s.from])} | ${heavy}`,
    )
  }
}
