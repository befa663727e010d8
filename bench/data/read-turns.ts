// How long one large Fetch read holds the event loop, three ways, on one file in the page cache:
//   sync     one readSync of the whole read (the file engine before reads went to the threadpool)
//   chunked  readSync of `chunk` bytes per turn, the next chunk after setImmediate
//   async    fs.read on libuv's threadpool (the file engine's reads above SYNC_READ_BYTES)
// For each: the longest time the loop was held in one turn by the read (median and p99 over the
// reads) and the time from the start of the read to its last byte.
//
//   node --import tsx bench/data/read-turns.ts [reads=200] [read-bytes=1048576] [chunk=65536]
//
// BENCH_DATA_DIR chooses where the 64 MiB file goes (default: the OS temp dir).
import fs from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'

const reads = Number(process.argv[2] ?? 200)
const readBytes = Number(process.argv[3] ?? 1 << 20)
const chunk = Number(process.argv[4] ?? 64 * 1024)
const FILE_BYTES = 64 << 20

const dir = fs.mkdtempSync(join(process.env.BENCH_DATA_DIR ?? tmpdir(), 'topograph-read-turns-'))
const path = join(dir, 'segment.log')
const block = Buffer.alloc(1 << 20, 7)
const fd = fs.openSync(path, 'w+')
for (let p = 0; p < FILE_BYTES; p += block.byteLength) fs.writeSync(fd, block, 0, block.byteLength, p)

const positions = Array.from(
  { length: reads },
  (_, i) => ((i * 7919) % (FILE_BYTES / readBytes - 1)) * readBytes,
)
const turn = () => new Promise<void>((r) => setImmediate(r))

interface Sample {
  held: number
  total: number
}

async function sync(pos: number): Promise<Sample> {
  const t0 = performance.now()
  fs.readSync(fd, Buffer.allocUnsafe(readBytes), 0, readBytes, pos)
  const t = performance.now() - t0
  await turn()
  return { held: t, total: t }
}

async function chunked(pos: number): Promise<Sample> {
  const buf = Buffer.allocUnsafe(readBytes)
  const t0 = performance.now()
  let held = 0
  for (let got = 0; got < readBytes; ) {
    const t = performance.now()
    got += fs.readSync(fd, buf, got, Math.min(chunk, readBytes - got), pos + got)
    held = Math.max(held, performance.now() - t)
    if (got < readBytes) await turn()
  }
  return { held, total: performance.now() - t0 }
}

async function threadpool(pos: number): Promise<Sample> {
  const buf = Buffer.allocUnsafe(readBytes)
  const t0 = performance.now()
  let held = 0
  await new Promise<void>((resolve, reject) => {
    const t = performance.now()
    fs.read(fd, buf, 0, readBytes, pos, (err) => (err === null ? resolve() : reject(err)))
    held = performance.now() - t
  })
  await turn()
  return { held, total: performance.now() - t0 }
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}
const ms = (x: number) => (x < 1 ? `${(x * 1000).toFixed(0)} µs` : `${x.toFixed(2)} ms`)

const ways: [string, (pos: number) => Promise<Sample>][] = [
  ['sync', sync],
  [`chunked (${chunk / 1024} KiB a turn)`, chunked],
  ['async (threadpool)', threadpool],
]
const samples = new Map<string, Sample[]>(ways.map(([name]) => [name, []]))
// Interleaved, so that the machine's other work weighs on the three alike.
for (const pos of positions) for (const [name, way] of ways) samples.get(name)?.push(await way(pos))
const load = (await import('node:os')).loadavg().map((x) => x.toFixed(2))
console.log(`${reads} reads of ${readBytes} B from a ${FILE_BYTES >> 20} MiB file; load ${load.join(', ')}`)
for (const [name, s] of samples) {
  const held = s.map((x) => x.held)
  const total = s.map((x) => x.total)
  console.log(
    `  ${name}: loop held per turn p50 ${ms(quantile(held, 0.5))}, p99 ${ms(quantile(held, 0.99))}; read done in p50 ${ms(quantile(total, 0.5))}, p99 ${ms(quantile(total, 0.99))}`,
  )
}
fs.closeSync(fd)
fs.rmSync(dir, { recursive: true, force: true })
