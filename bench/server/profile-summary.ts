// Prints where a .cpuprofile spends its samples: self time per function and per source file, and
// inclusive time for functions of Topograph's own sources.
//
//   npx tsx bench/server/profile-summary.ts <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs'

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
const [file, topArg] = process.argv.slice(2)
if (!file) {
  console.error('usage: profile-summary.ts <file.cpuprofile> [top]')
  process.exit(2)
}
const top = Number(topArg ?? 25)
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[] }
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const counts = new Map<number, number>()
for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1)
const total = profile.samples.length

const short = (url: string) => url.replace(/^.*\/(src|node_modules)\//, '$1/').replace(/^node:/, 'node:')
const label = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`
const self = new Map<string, number>()
const perFile = new Map<string, number>()
const inclusive = new Map<string, number>()
for (const [id, k] of counts) {
  const n = byId.get(id) as Node
  self.set(label(n), (self.get(label(n)) ?? 0) + k)
  const f = short(n.callFrame.url) || `(${n.callFrame.functionName})`
  perFile.set(f, (perFile.get(f) ?? 0) + k)
  const seen = new Set<string>()
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const c = byId.get(cur) as Node
    if (!c.callFrame.url.includes('/src/')) continue
    const l = label(c)
    if (seen.has(l)) continue
    seen.add(l)
    inclusive.set(l, (inclusive.get(l) ?? 0) + k)
  }
}
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`)
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`)
  }
}
console.log(`${total} samples`)
show('self time by function', self)
show('self time by file', perFile)
show('inclusive time, functions in src/', inclusive)
