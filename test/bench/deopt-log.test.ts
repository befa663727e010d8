// The servers' deoptimizations as requests.ts counts them from V8's log (bench/server/deopt-log.ts):
// a row's count must be the log's `code-deopt` lines of that stretch, told apart by kind, whatever
// else the log holds.
import assert from 'node:assert/strict'
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { countDeopts, DeoptLog, describeDeopts } from '../../bench/server/deopt-log.js'

const log = [
  'v8-version,11,3,244,8,0,0',
  'new,MemoryChunk,0x19b986f80000,262144',
  'code-deopt,13315338,832,0x7f2370007cb4,-1,292,deopt-lazy,<file:///srv/dist/src/server/connection.js:292:18>,weak objects',
  'code-deopt,13315344,640,0x7f2370007cb5,-1,320,deopt-lazy,<file:///srv/dist/src/server/connection.js:320:12>,weak objects',
  'code-deopt,17334575,256,0x7f2370007cb6,-1,43,deopt-lazy,<file:///srv/dist/src/server/read-buffer.js:43:23>,code dependencies',
  'code-deopt,17334401,512,0x7f2370007cb7,2,223,deopt-eager,<node:internal/stream_base_commons:223:14>,wrong map',
  'delete,MemoryChunk,0x19b986f80000',
  'code-deopt,15845575,128,0x7f2370007cb8,0,31,deopt-eager,<node:internal/linkedlist:31:30> inlined at <node:internal/timers:386:5>,Insufficient type feedback for generic named access',
  'code-deopt,17334402,512,0x7f2370007cb9,2,223,deopt-eager,<node:internal/stream_base_commons:223:14>,wrong map',
].join('\n')

test('countDeopts: the code-deopt lines by kind, reason and place, nothing else', () => {
  const d = countDeopts(`${log}\n`)
  assert.equal(d.total, 6)
  assert.equal(d.gc, 2)
  assert.equal(d.dependencies, 1)
  assert.deepEqual(d.reasons, [
    ['deopt-eager: wrong map', 2],
    ['deopt-eager: Insufficient type feedback for generic named access', 1],
  ])
  assert.deepEqual(d.where[0], ['stream_base_commons:223:14', 2])
  assert.ok(d.where.some(([w, n]) => w === 'linkedlist:31:30' && n === 1))
  assert.equal(
    d.where.reduce((sum, [, n]) => sum + n, 0),
    6,
  )
})

test('countDeopts: a reason holding commas stays whole; other lines count nothing', () => {
  const d = countDeopts(
    'code-deopt,1,2,0x1,-1,5,deopt-soft,<file:///a/b.js:1:2>,Insufficient type feedback, for call\nheap-capacity,1\n',
  )
  assert.equal(d.total, 1)
  assert.deepEqual(d.reasons, [['deopt-soft: Insufficient type feedback, for call', 1]])
  assert.equal(countDeopts('new,MemoryChunk,0x1,2\ndelete,MemoryChunk,0x1\n').total, 0)
})

test('describeDeopts: the counts a row prints', () => {
  assert.equal(describeDeopts(countDeopts('')), '0 deopts')
  assert.equal(
    describeDeopts(countDeopts(log), 1),
    '6 deopts (2 by a full collection, 1 dependency, deopt-eager: wrong map ×2; in stream_base_commons:223:14 ×2)',
  )
})

test('DeoptLog.take: each call counts what the log gained since the last, a line only once complete', () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-deopt-log-'))
  try {
    const file = join(dir, 'v8.log')
    writeFileSync(file, 'v8-version,11,3\n')
    const deopts = DeoptLog.ofThisProcess(['--log-deopt', `--logfile=${file}`, '--no-logfile-per-isolate'])
    assert.ok(deopts !== undefined)
    const line = 'code-deopt,1,2,0x1,-1,5,deopt-eager,<file:///a/b.js:1:2>,wrong map\n'
    appendFileSync(file, line + line.slice(0, 20))
    assert.equal(deopts.take().total, 1)
    appendFileSync(file, `${line.slice(20)}${line}`)
    assert.equal(deopts.take().total, 2)
    assert.equal(deopts.take().total, 0)
    deopts.close()
    assert.equal(DeoptLog.ofThisProcess(['--import', 'tsx']), undefined)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
