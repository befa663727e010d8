/**
 * What the server allocates: attributes an allocation sample that tools/soak/report-memory.mjs
 * wrote (SOAK_SERVER_HEAP_SAMPLE=DIR; garbage included).
 *
 *   npx tsx tools/soak/heap-sample.ts --file DIR/heap-<pid>.json [--heartbeats-per-s 2000] [--top 25]
 *
 * Prints the bytes allocated in the sampled window (the profiler's estimate: each sample stands for
 * the bytes allocated since the previous one), per second and per heartbeat (at the given rate:
 * the soak's 10,000 members at 5 s send 2,000 a second), the window's scavenges and mark-compacts,
 * or per answered request when the sample counted them (a benchmark's BENCH_HEAP_SAMPLE, see
 * bench/server/load.ts), then the bytes by the function that allocated them, and by the innermost function of the
 * server's own sources (src/) on the allocation's stack (what the server did that allocated, Node's
 * and V8's internals below it included).
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

interface HeapNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: HeapNode[]
}

interface HeapSample {
  readonly startedAt: number
  readonly stoppedAt: number
  readonly scavenges: number
  readonly markCompacts: number
  /** Requests answered in the window, when the sampler counted them (bench/server/load.ts). */
  readonly requests?: number
  readonly profile: { readonly head: HeapNode }
}

const { values } = parseArgs({
  options: {
    file: { type: 'string' },
    'heartbeats-per-s': { type: 'string', default: '2000' },
    top: { type: 'string', default: '25' },
  },
})
if (values.file === undefined) {
  console.error('usage: heap-sample.ts --file DIR/heap-<pid>.json [--heartbeats-per-s N] [--top N]')
  process.exit(2)
}
const sample = JSON.parse(readFileSync(values.file, 'utf8')) as HeapSample
const seconds = (sample.stoppedAt - sample.startedAt) / 1000
const perSecond = Number(values['heartbeats-per-s'])
const top = Number(values.top)

const frame = (n: HeapNode) => {
  const url = n.callFrame.url.replace(/^file:\/\/.*?\/(src|node_modules|tools|test)\//, '$1/')
  return `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`
}
const isOwn = (n: HeapNode) => /\/src\//.test(n.callFrame.url)
const bySelf = new Map<string, number>()
const byOwn = new Map<string, number>()
let total = 0
const walk = (n: HeapNode, own: string) => {
  const here = isOwn(n) ? frame(n) : own
  if (n.selfSize > 0) {
    total += n.selfSize
    const f = frame(n)
    bySelf.set(f, (bySelf.get(f) ?? 0) + n.selfSize)
    byOwn.set(here, (byOwn.get(here) ?? 0) + n.selfSize)
  }
  for (const c of n.children) walk(c, here)
}
walk(sample.profile.head, '(no src/ frame)')

const kb = (b: number) => (b / 1024).toFixed(1)
const heartbeats = sample.requests ?? perSecond * seconds
const rate = sample.requests === undefined ? `at ${perSecond}/s` : `of ${sample.requests} answered`
console.log(
  `${seconds.toFixed(0)} s sampled: ${(total / 1048576).toFixed(1)} MiB allocated, ${(total / 1048576 / seconds).toFixed(2)} MiB/s, ` +
    `${(total / heartbeats).toFixed(0)} B per heartbeat ${rate}; ${sample.scavenges} scavenges, ${sample.markCompacts} mark-compacts`,
)
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}\n| KiB | share | B / heartbeat | where |\n| ---: | ---: | ---: | --- |`)
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`| ${kb(v)} | ${((100 * v) / total).toFixed(1)} % | ${(v / heartbeats).toFixed(0)} | ${k} |`)
}
print('By the allocating function:', bySelf)
print("By the innermost function of the server's sources on the stack:", byOwn)
