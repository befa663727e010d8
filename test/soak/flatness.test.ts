// The soak's flatness verdicts (tools/soak/soak.ts, `flatnessVerdicts`) from given rows: the raw
// heartbeat p99, the p99 against the same minute's ceiling (divided by it and less it), and the
// RSS, each over the window from `flatFrom` without the restart's minute.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { flatness, flatnessVerdicts } from '../../tools/soak/soak.js'

const o = { flatFrom: 2, restartAt: 5, minutes: 8 }
type Row = { minute: number; p99: number; ceilingP99: number; rssMb: number }
const rows = (p99: number[], ceilingP99: number[], rssMb = 190): Row[] =>
  p99.map((x, minute) => ({ minute, p99: x, ceilingP99: ceilingP99[minute], rssMb }))
const verdict = (vs: ReturnType<typeof flatnessVerdicts>, start: string) => {
  const v = vs.find((x) => x.criterion.startsWith(start))
  assert.ok(v !== undefined, `no verdict "${start}" in ${JSON.stringify(vs)}`)
  return v
}

test('flatness: the widest distance from the median over the window, without the restart minute', () => {
  // Minutes 0 and 1 are before the window, minute 5 is the restart's: only 2, 3, 4, 6, 7 count.
  const r = rows([9, 0.1, 1.0, 1.09, 0.95, 50, 1.05, 1.0], [])
  const f = flatness(r, o, (x) => x.p99)
  // Median of 0.95, 1.0, 1.0, 1.05, 1.09 is 1.0; the farthest is 1.09: ±9 %.
  assert.equal(f.pass, true)
  assert.match(
    f.detail,
    /median 1\.00, min 0\.95, max 1\.09: ±9\.0 % \(minutes 2–7 without the restart minute 5\)/,
  )
  const g = flatness(rows([1, 1, 1.0, 1.0, 1.0, 1, 1.0, 1.11], []), o, (x) => x.p99)
  assert.equal(g.pass, false)
  assert.match(g.detail, /±11\.0 %/)
  // Minutes without the figure are left out; none at all passes with a note.
  assert.deepEqual(
    flatness(
      rows([1, 1, Number.NaN, Number.NaN, Number.NaN, 1, Number.NaN, Number.NaN], []),
      o,
      (x) => x.p99,
    ),
    {
      pass: true,
      detail: 'no minutes in the window',
    },
  )
})

test('the p99 that moves with its ceiling fails as written and passes against the ceiling', () => {
  // The machine's minutes: the ceiling's p99 moves ±40 %, Topograph's with it at 3× (and 0.2 ms more).
  const ceiling = [0.5, 0.5, 0.5, 0.7, 0.3, 0.5, 0.55, 0.45]
  const p99 = ceiling.map((c) => 3 * c)
  const vs = flatnessVerdicts(rows(p99, ceiling), o)
  assert.deepEqual(
    vs.map((v) => v.criterion),
    [
      'heartbeat p99 flat within ±10 %',
      'heartbeat p99 against the same-minute ceiling flat within ±10 %',
      'heartbeat p99 above the same-minute ceiling flat within ±10 %',
      'server RSS flat within ±10 %',
    ],
  )
  const raw = verdict(vs, 'heartbeat p99 flat')
  assert.equal(raw.pass, false)
  assert.match(raw.detail, /median 1\.50, min 0\.90, max 2\.10: ±40\.0 %/)
  const ratio = verdict(vs, 'heartbeat p99 against')
  assert.equal(ratio.pass, true)
  assert.match(ratio.detail, /^p99 ÷ the ceiling's p99: median 3\.00, min 3\.00, max 3\.00: ±0\.0 %/)
  // Less the ceiling, the same rows are 2× the ceiling: as unsteady as the ceiling itself.
  const above = verdict(vs, 'heartbeat p99 above')
  assert.equal(above.pass, false)
  assert.match(above.detail, /^p99 − the ceiling's p99: median 1\.00, min 0\.60, max 1\.40: ±40\.0 % .* ms$/)
  assert.equal(verdict(vs, 'server RSS').pass, true)
})

test('a server-side step the ceiling does not have fails against the ceiling too', () => {
  // The ceiling is steady; Topograph's p99 steps from 1.0 to 1.3 ms in the last two minutes.
  const ceiling = [0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4]
  const p99 = [1, 1, 1.0, 1.0, 1.0, 9, 1.3, 1.3]
  const vs = flatnessVerdicts(rows(p99, ceiling), o)
  assert.equal(verdict(vs, 'heartbeat p99 flat').pass, false)
  const ratio = verdict(vs, 'heartbeat p99 against')
  assert.equal(ratio.pass, false)
  assert.match(ratio.detail, /median 2\.50, min 2\.50, max 3\.25: ±30\.0 %/)
  const above = verdict(vs, 'heartbeat p99 above')
  assert.equal(above.pass, false)
  assert.match(above.detail, /median 0\.60, min 0\.60, max 0\.90: ±50\.0 %/)
})

test('without a ceiling (--ceiling-members 0) only the raw p99 and the RSS are judged', () => {
  const vs = flatnessVerdicts(rows([1, 1, 1, 1, 1, 1, 1, 1], new Array(8).fill(Number.NaN), 300), o)
  assert.deepEqual(
    vs.map((v) => [v.criterion, v.pass]),
    [
      ['heartbeat p99 flat within ±10 %', true],
      ['server RSS flat within ±10 %', true],
    ],
  )
})
