// The shard is synchronous and deterministic (docs/architecture.md): its code reads no clock, arms
// no timer, holds no promise and draws no random number; time and ids come in as arguments, timers
// go out in operation results. The runtime is generic: its code names no group. The import side of
// both rules is .dependency-cruiser.cjs; this test checks the code itself.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

function sources(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...sources(p))
    else if (p.endsWith('.ts')) out.push(p)
  }
  return out
}

/** The code without comments and string/template contents (what remains is code). */
function code(text: string): string {
  let out = ''
  let i = 0
  while (i < text.length) {
    const c = text[i]
    const next = text[i + 1]
    if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2)
      i = end < 0 ? text.length : end + 2
    } else if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i)
      i = end < 0 ? text.length : end
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1
      out += `${c}${c}`
      i = j + 1
    } else {
      out += c
      i++
    }
  }
  return out
}

const SHARD_FORBIDDEN: [RegExp, string][] = [
  [/\bDate\s*\.\s*now\b/, 'Date.now'],
  [/\bnew\s+Date\b/, 'new Date'],
  [/\bperformance\s*\./, 'performance'],
  [/\bprocess\s*\.\s*hrtime\b/, 'process.hrtime'],
  [/\b(setTimeout|setInterval|setImmediate|queueMicrotask|clearTimeout|clearInterval)\b/, 'timers'],
  [/\bPromise\b/, 'Promise'],
  [/\basync\b/, 'async'],
  [/\bawait\b/, 'await'],
  [/\bMath\s*\.\s*random\b/, 'Math.random'],
  [/\brandomUUID\b|\bgetRandomValues\b/, 'random ids'],
]

test('shard code reads no clock, arms no timer, holds no promise and draws no random number', () => {
  const files = sources('src/coordinator/shard')
  assert.ok(files.length > 20)
  const found: string[] = []
  for (const file of files) {
    const body = code(readFileSync(file, 'utf8'))
    for (const [pattern, what] of SHARD_FORBIDDEN) if (pattern.test(body)) found.push(`${file}: ${what}`)
  }
  assert.deepEqual(found, [])
})

test('the check sees through comments and strings but not past code', () => {
  assert.equal(/\bDate\s*\.\s*now\b/.test(code("// Date.now()\nconst s = 'setTimeout'\n")), false)
  assert.equal(/\bPromise\b/.test(code('const p: Promise<void> = x // fine?')), true)
})

test('runtime code names no group, member or heartbeat (it is shared by every coordinator)', () => {
  const found: string[] = []
  for (const file of sources('src/coordinator/runtime')) {
    const body = code(readFileSync(file, 'utf8'))
    for (const word of body.match(/\b\w*(group|member|heartbeat|streams|classic|offset)\w*\b/gi) ?? [])
      found.push(`${file}: ${word}`)
  }
  assert.deepEqual(found, [])
})
