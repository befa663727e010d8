// The main thread's scheduler statistics on Linux (/proc/self/task/<pid>/schedstat): its time on a
// CPU and its time runnable but waiting for one. Unlike process.cpuUsage, which adds every thread of
// the process (V8's GC helpers, a SQLite checkpoint worker), they tell the event loop's own work from
// the machine taking the core away, which a shared machine's load changes.
import { closeSync, openSync, readSync } from 'node:fs'

/** Nanoseconds so far. */
export interface ThreadStat {
  readonly onCpu: number
  readonly waiting: number
}

let fd: number | null | undefined
const buf = Buffer.alloc(128)
/** Taken at load: a benchmark that times node:fs calls by replacing them in place does not time these. */
const pread = readSync

/** The main thread's statistics so far, or null off Linux. One pread of a kept-open file. */
export function mainThreadStat(): ThreadStat | null {
  if (fd === undefined) {
    try {
      fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r')
    } catch {
      fd = null
    }
  }
  if (fd === null) return null
  const n = pread(fd, buf, 0, buf.length, 0)
  const text = buf.toString('latin1', 0, n)
  const a = text.indexOf(' ')
  const b = text.indexOf(' ', a + 1)
  return { onCpu: Number(text.slice(0, a)), waiting: Number(text.slice(a + 1, b)) }
}

/** Closes the kept file (a process that ends need not). */
export function closeThreadStat(): void {
  if (typeof fd === 'number') closeSync(fd)
  fd = undefined
}
