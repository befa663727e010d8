// The catalogue of local error codes (src/coordinator/error-codes.ts) and docs/errors.md list the
// same codes with the same meanings; every code the coordinator's sources raise is catalogued.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { LOCAL_ERROR_CODES } from '../../src/coordinator/error-codes.js'

function documented(): Map<string, string> {
  const text = readFileSync('docs/errors.md', 'utf8')
  const section = text.slice(text.indexOf('## Local error codes'))
  const rows = new Map<string, string>()
  for (const m of section.matchAll(/^\| `([A-Z_]+)` \| [^|]+ \| (.+) \|$/gm)) rows.set(m[1], m[2])
  return rows
}

function sources(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...sources(p))
    else if (p.endsWith('.ts')) out.push(p)
  }
  return out
}

test('docs/errors.md lists every catalogued local error code with its meaning, and no other', () => {
  const docs = documented()
  assert.deepEqual([...docs.keys()].sort(), Object.keys(LOCAL_ERROR_CODES).sort())
  for (const [code, meaning] of Object.entries(LOCAL_ERROR_CODES)) assert.equal(docs.get(code), meaning, code)
})

test('every local error code raised in src/coordinator is catalogued', () => {
  const raised = new Set<string>()
  for (const file of sources('src/coordinator')) {
    const text = readFileSync(file, 'utf8')
    // new CoordinatorRuntimeError('X', …), new StorageError('X', …), `code … = 'X'`
    for (const m of text.matchAll(/new (?:CoordinatorRuntimeError|StorageError)\(\s*'([A-Z_]+)'/g))
      raised.add(m[1])
    for (const m of text.matchAll(/readonly code(?:: \w+)? = '([A-Z_]+)'/g)) raised.add(m[1])
    for (const m of text.matchAll(/super\(\s*'([A-Z_]+)',/g)) raised.add(m[1])
  }
  assert.ok(raised.size >= 10, `found ${raised.size} raised codes`)
  for (const code of raised) assert.ok(code in LOCAL_ERROR_CODES, `${code} is raised but not catalogued`)
})
