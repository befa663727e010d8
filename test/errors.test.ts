// The catalogue of local error codes (src/errors.ts) and docs/errors.md list the same codes with
// the same meanings; every code the sources raise is catalogued.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { sourceFiles } from './testkit/sources.js'
import { LOCAL_ERROR_CODES } from '../src/errors.js'

function documented(): Map<string, string> {
  const text = readFileSync('docs/errors.md', 'utf8')
  const section = text.slice(text.indexOf('## Local error codes'))
  const rows = new Map<string, string>()
  for (const m of section.matchAll(/^\| `([A-Z_]+)` \| [^|]+ \| (.+) \|$/gm)) rows.set(m[1], m[2])
  return rows
}

test('docs/errors.md lists every catalogued local error code with its meaning, and no other', () => {
  const docs = documented()
  assert.deepEqual([...docs.keys()].sort(), Object.keys(LOCAL_ERROR_CODES).sort())
  for (const [code, meaning] of Object.entries(LOCAL_ERROR_CODES)) assert.equal(docs.get(code), meaning, code)
})

test('every local error code raised in src is catalogued', () => {
  const raised = new Set<string>()
  for (const file of sourceFiles('src')) {
    const text = readFileSync(file, 'utf8')
    // new LocalError('X', …), new CoordinatorRuntimeError('X', …), new StorageError('X', …),
    // isLocalError(e, 'X'), `code … = 'X'`
    for (const m of text.matchAll(
      /(?:new (?:LocalError|CoordinatorRuntimeError|StorageError)\(|isLocalError\(\w+, )\s*'([A-Z_]+)'/g,
    ))
      raised.add(m[1])
    for (const m of text.matchAll(/readonly code(?:: \w+)? = '([A-Z_]+)'/g)) raised.add(m[1])
    for (const m of text.matchAll(/super\(\s*'([A-Z_]+)',/g)) raised.add(m[1])
  }
  assert.ok(raised.size >= 10, `found ${raised.size} raised codes`)
  for (const code of raised) assert.ok(code in LOCAL_ERROR_CODES, `${code} is raised but not catalogued`)
})
