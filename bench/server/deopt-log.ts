// The servers' process's deoptimizations, from V8's own log: run with `--log-deopt
// --logfile=<file> --no-logfile-per-isolate`, V8 appends a `code-deopt` line to the file at each
// deoptimization of optimized code, and `DeoptLog.take()` reads what came since the last call. A
// benchmark that measures a server's CPU per request over several phases of one process can then
// say which phase had its code thrown away: a closed loop that pays for re-optimization, or one
// whose code was re-optimized with other feedback, is slower without the machine being so.
//
// The kinds that matter apart: `weak objects` are deoptimizations a full collection makes (code
// that embedded an object that died); `code dependencies` come from an object shape or field type
// the code assumed changing; the rest (eager, lazy, soft) are the code meeting a value or shape
// its feedback did not have, with V8's reason.
import { closeSync, openSync, readSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Deoptimizations in a stretch of the log. */
export interface Deopts {
  readonly total: number
  /** Made by a full collection ("weak objects"). */
  readonly gc: number
  /** An assumed shape or field type changed ("code dependencies"). */
  readonly dependencies: number
  /** The others, by `kind: reason` (e.g. `deopt-eager: wrong map`), most first. */
  readonly reasons: readonly (readonly [string, number])[]
  /** Every deoptimization by the code it happened in (`file:line:column`, file without its directory), most first. */
  readonly where: readonly (readonly [string, number])[]
}

/**
 * Counts the `code-deopt` lines of a piece of V8's log (`--log-deopt`):
 * `code-deopt,<µs>,<size>,<pc>,<inlining id>,<offset>,<kind>,<location>,<reason>`, where the reason
 * may hold commas and the location is `<url:line:column>`, optionally followed by ` inlined at <…>`.
 * Other lines (and a last line not yet complete) are left out.
 */
export function countDeopts(text: string): Deopts {
  let total = 0
  let gc = 0
  let dependencies = 0
  const reasons = new Map<string, number>()
  const where = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (!line.startsWith('code-deopt,')) continue
    const fields = line.split(',')
    if (fields.length < 9) continue
    total++
    const kind = fields[6]
    const location = fields[7]
    const reason = fields.slice(8).join(',')
    if (reason === 'weak objects') gc++
    else if (reason === 'code dependencies') dependencies++
    else reasons.set(`${kind}: ${reason}`, (reasons.get(`${kind}: ${reason}`) ?? 0) + 1)
    const at = /^<([^>]*)>/.exec(location)?.[1] ?? location
    const short = at.slice(at.lastIndexOf('/') + 1)
    where.set(short, (where.get(short) ?? 0) + 1)
  }
  const mostFirst = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1])
  return { total, gc, dependencies, reasons: mostFirst(reasons), where: mostFirst(where) }
}

/** `12 deopts (9 by a full collection, 1 dependency, deopt-eager: wrong map ×2; in connection.js:320:12 ×2, …)`. */
export function describeDeopts(d: Deopts, top = 3): string {
  if (d.total === 0) return '0 deopts'
  const parts = [
    ...(d.gc > 0 ? [`${d.gc} by a full collection`] : []),
    ...(d.dependencies > 0 ? [`${d.dependencies} dependency`] : []),
    ...d.reasons.slice(0, top).map(([r, n]) => `${r} ×${n}`),
  ]
  const where = d.where.slice(0, top).map(([w, n]) => `${w} ×${n}`)
  return `${d.total} deopts (${parts.join(', ')}; in ${where.join(', ')})`
}

/** The Node options that make V8 log this process's deoptimizations to a fresh file. */
export function deoptLogOptions(file = join(tmpdir(), `topograph-bench-v8-${process.pid}.log`)): string[] {
  return ['--log-deopt', `--logfile=${file}`, '--no-logfile-per-isolate']
}

/** Reads V8's log of this process's deoptimizations as it grows. */
export class DeoptLog {
  #offset = 0
  #partial = ''
  readonly #fd: number
  readonly #buf = Buffer.alloc(1 << 16)

  private constructor(fd: number) {
    this.#fd = fd
  }

  /** The log this process writes (it runs with {@link deoptLogOptions}), or undefined without. */
  static ofThisProcess(execArgv: readonly string[] = process.execArgv): DeoptLog | undefined {
    if (!execArgv.includes('--log-deopt')) return undefined
    const file = execArgv.find((o) => o.startsWith('--logfile='))?.slice('--logfile='.length)
    if (file === undefined || file === '-' || file === '+') return undefined
    try {
      return new DeoptLog(openSync(file, 'r'))
    } catch {
      return undefined
    }
  }

  /** The deoptimizations logged since the last call (the first: since the process started). */
  take(): Deopts {
    let text = this.#partial
    for (;;) {
      const n = readSync(this.#fd, this.#buf, 0, this.#buf.length, this.#offset)
      if (n === 0) break
      this.#offset += n
      text += this.#buf.toString('latin1', 0, n)
    }
    const end = text.lastIndexOf('\n') + 1
    this.#partial = text.slice(end)
    return countDeopts(text.slice(0, end))
  }

  close(): void {
    closeSync(this.#fd)
  }
}
