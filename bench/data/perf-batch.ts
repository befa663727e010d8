// Where the server's main thread spends its time on the produce → fetch path, from a `perf record
// -g` of the server process (node started with --perf-basic-prof, so that JavaScript frames have
// names): each sample of the thread is put in the first part below whose test its stack passes,
// and the parts are printed as shares of the thread's samples, and in µs a batch when the run's
// main-thread CPU per batch is given (cpu-per-batch.ts prints it). perf samples the thread only
// while it runs on a CPU (cpu-clock), so the shares are of its CPU time, the kernel's side of its
// system calls included.
//
//   perf record -F 999 -g -p <server pid> -o perf.data -- sleep 5
//   perf script -i perf.data --tid <server pid> -F tid,ip,sym > main.stacks
//   npx tsx bench/data/perf-batch.ts main.stacks [main-thread µs a batch] [--other]
//
// A sample goes to the innermost frame of its stack that names a part: a system call's kernel entry
// (the segment's pwrite64, a socket's write or writev, a socket's read, epoll), a collection, a
// threadpool hand-off, or the JavaScript function that ran. Functions the compiler inlined show as
// their caller.
import { readFileSync } from 'node:fs'

const [file, usArg, flag] = process.argv.slice(2)
if (!file) {
  console.error('usage: perf-batch.ts <perf script output> [main-thread µs a batch] [--other]')
  process.exit(2)
}
const stacks = readFileSync(file, 'utf8')
  .split(/\n\s*\n/)
  .map((block) =>
    block
      .split('\n')
      .slice(1)
      .map((line) => line.trim().replace(/^[0-9a-f]+ /, ''))
      .filter((f) => f !== ''),
  )
  .filter((s) => s.length > 0)

const PARTS: readonly [RegExp, string][] = [
  [/Heap::|Scavenge|MarkCompact|Sweeper|IncrementalMarking|MemoryAllocator/, 'garbage collection'],
  [/__x64_sys_pwrite64|__libc_pwrite/, 'append: the segment write (pwrite64)'],
  [/__x64_sys_ftruncate/, 'append: pages read ahead (ftruncate)'],
  [/__x64_sys_pread64/, 'Fetch: synchronous read of the batches (pread64)'],
  [/__x64_sys_writev|do_writev|^(__)?writev$/, 'Fetch answers: socket writev'],
  [/__x64_sys_write\b|ksys_write\b|__GI___libc_write|__libc_write\b/, 'Produce answers: socket write'],
  [/__x64_sys_read\b|ksys_read\b|^read$|__libc_read\b|uv__read/, 'socket reads (read)'],
  [/epoll|uv__io_poll/, 'epoll'],
  [/uv__work_submit|pthread_cond_signal/, 'threadpool hand-off (pages read ahead, Fetch reads)'],
  [/uv__work_done|FSReqCallback/, 'threadpool completions'],
  [/crc32c|computeCrc|isCrcValid/, 'append: CRC-32C'],
  [/JS:.*(validateRecords|scanRecords|readBatchHeader)/, 'append: validation (framing, records)'],
  [/JS:.*#readAhead/, 'append: pages read ahead (ftruncate)'],
  [
    /JS:.*(partition-log|log\/file|producer-state|log\/batch)\.js/,
    'append: the log (offsets, indexes, producer state)',
  ],
  [/JS:.*(readProduceRequest|readFetchRequest|reader\.js)/, 'requests: decode'],
  [
    /JS:.*(writeProduceResponse|writeFetchResponse|encodeResponseChunks|encodeInPlace|writeResponseFrame|writer\.js)/,
    'answers: encode',
  ],
  [/JS:.*001-fetch/, 'Fetch: handler (park, wake, read)'],
  [/JS:.*000-produce/, 'Produce: handler'],
  [/JS:.*(read-buffer|frames)\.js/, 'frames (read buffer, split frames copied)'],
  [
    /JS:.*(streams\/writable|stream_base_commons|node:net|internal\/timers|task_queues)/,
    "Node's socket and timer code",
  ],
  [/JS:.*(connection|router|listener)\.js/, 'connection and router'],
  [/JS:.*bench\//, 'the benchmark in the server process'],
]

const counts = new Map<string, number>()
const other = new Map<string, number>()
for (const s of stacks) {
  let part: string | undefined
  for (const f of s) {
    part = PARTS.find(([re]) => re.test(f))?.[1]
    if (part !== undefined) break
  }
  part ??= 'other (unresolved frames, V8 and Node internals)'
  counts.set(part, (counts.get(part) ?? 0) + 1)
  if (part.startsWith('other')) {
    const key = s.slice(0, 4).join(' < ')
    other.set(key, (other.get(key) ?? 0) + 1)
  }
}
const us = Number(usArg ?? Number.NaN)
console.log(`${stacks.length} samples of the main thread`)
for (const [part, n] of [...counts].sort((a, b) => b[1] - a[1])) {
  const share = n / stacks.length
  const perBatch = Number.isFinite(us) ? `${(share * us).toFixed(1).padStart(5)} µs  ` : ''
  console.log(`${(100 * share).toFixed(1).padStart(5)} %  ${perBatch}${part}`)
}
if (flag === '--other')
  for (const [k, n] of [...other].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${n}  ${k}`)
