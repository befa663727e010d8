// The memory engine under a steady OffsetCommit-shaped load, without a server: appends of 6 records
// (keys and values of the sizes of offset commit records) until `records` records were written,
// timing every append. Prints appends per second, the p99 and longest append, the CPU time of the
// longest (a pause of the engine itself, not the machine taking the core away, when it is about the
// same) and what the shard's log holds at the end.
//
//   node --import tsx bench/server/store-append.ts [records=3000000] [module=../../src/coordinator/storage/memory.js]
import { performance } from 'node:perf_hooks'
import type { CoordinatorRecord, RecordStore } from '../../src/coordinator/storage/types.js'

const total = Number(process.argv[2] ?? 3_000_000)
const modulePath = process.argv[3] ?? '../../src/coordinator/storage/memory.js'
const { MemoryRecordStore } = (await import(modulePath)) as {
  MemoryRecordStore: new () => RecordStore & { usage?(shard: number): unknown }
}
const store = new MemoryRecordStore()
await store.open()
// An offset commit record: a key of type, group, topic and partition; a value of offset, epoch,
// metadata and timestamps.
const batch: CoordinatorRecord[] = Array.from({ length: 6 }, (_, p) => ({
  key: new Uint8Array(Buffer.from(`\u0000\u0001\u0000\u000cbench-commit\u0000\u0007bench-${p >> 1}${p}`)),
  value: new Uint8Array(40).fill(p),
}))
const times: number[] = []
let longest = 0
let longestCpuMs = 0
const t0 = performance.now()
for (let n = 0; n < total; n += batch.length) {
  const cpu = process.cpuUsage()
  const at = performance.now()
  await store.append(0, batch)
  const ms = performance.now() - at
  times.push(ms)
  if (ms > longest) {
    const c = process.cpuUsage(cpu)
    longest = ms
    longestCpuMs = (c.user + c.system) / 1000
  }
}
const seconds = (performance.now() - t0) / 1000
times.sort((a, b) => a - b)
console.log(
  `${modulePath}: ${Math.round(times.length / seconds).toLocaleString('en')} appends/s of 6 records; p99 ${times[Math.floor(times.length * 0.99)].toFixed(3)} ms, p99.99 ${times[Math.floor(times.length * 0.9999)].toFixed(3)} ms, longest ${longest.toFixed(1)} ms (${longestCpuMs.toFixed(1)} ms on CPU); memory: ${Math.round(process.memoryUsage().arrayBuffers / 1048576)} MB of array buffers`,
)
if (store.usage !== undefined) console.log('log at the end:', store.usage(0))
