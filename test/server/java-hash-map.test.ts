// The iteration order of JavaStringHashMap against java.util.HashMap: every expected order below is
// what a JVM (java.util.HashMap<String, Boolean>, Java 17+) printed for the same puts and removes.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { JavaStringHashMap } from '../../src/server/java-hash-map.js'

function order(ops: readonly string[]): string {
  const m = new JavaStringHashMap<boolean>()
  for (const op of ops) {
    if (op.startsWith('-')) m.delete(op.slice(1))
    else m.set(op.slice(1), true)
  }
  return m.keys().join(' ')
}

describe('JavaStringHashMap', () => {
  it('iterates as a HashMap filled with 30 keys (one growth of the table)', () => {
    const ops = Array.from({ length: 30 }, (_, i) => `+user${i}`)
    assert.equal(
      order(ops),
      'user11 user10 user15 user14 user13 user12 user19 user18 user17 user16 user1 user22 user2 user21 ' +
        'user20 user0 user26 user25 user24 user23 user9 user7 user8 user5 user6 user3 user4 user29 user28 user27',
    )
  })

  it('puts a removed key that comes back after the others of its bucket', () => {
    const ops = '+alice +bob +carol -bob +dave +bob +zed +few +many +twice -twice +nobody +configured'.split(
      ' ',
    )
    assert.equal(order(ops), 'configured carol dave bob zed alice few many nobody')
  })

  it('iterates as a HashMap after 100 puts and 40 removes (three growths)', () => {
    const ops = [
      ...Array.from({ length: 100 }, (_, i) => `+u${(i * 7919) % 1000}`),
      ...Array.from({ length: 40 }, (_, i) => `-u${(i * 7919 * 2) % 1000}`),
    ]
    const expected = [
      'u299 u573 u601 u327 u841 u165 u439 u953 u679 u87 u710 u193 u872 u595 u355 u196 u109 u869 ',
      'u623 u467 u3 u629 u221 u224 u981 u461 u735 u975 u411 u651 u925 u31 u489 u249 u34 u763 u520 ',
      'u757 u517 u358 u115 u919 u271 u277 u433 u791 u947 u548 u545 u305 u59 u707 u785 u386 u383 ',
      'u143 u62 u813 u137 u897',
    ].join('')
    assert.equal(order(ops), expected)
  })

  it("keeps the insertion order of one bucket's keys across growths (equal hash codes)", () => {
    // "Aa" and "BB" have the same String.hashCode(): ten keys in one bucket grow the table twice.
    const keys = Array.from({ length: 10 }, (_, i) =>
      [0, 1, 2, 3].map((b) => ((i >> b) & 1 ? 'Aa' : 'BB')).join(''),
    )
    assert.equal(order(keys.map((k) => `+${k}`)), keys.join(' '))
  })

  it('gives the orders the SCRAM answers are checked with', () => {
    assert.equal(order(['+edge-low', '+edge-high']), 'edge-high edge-low')
    assert.equal(
      order(['+', '+unknown-mech', '+zero-mech', '+absent', '+few', '+many', '+up-mech']),
      ' zero-mech unknown-mech absent few up-mech many',
    )
    assert.equal(order(['+bob', '+carol']), 'carol bob')
    assert.equal(order(['+amy', '+conf', '+zed']), 'zed conf amy')
    assert.equal(order(['+amy', '+nobody', '+zed']), 'zed amy nobody')
    assert.equal(order(['+admin', '+alice', '+bob']), 'bob admin alice')
    assert.equal(order(['+alice', '+bob', '+carol']), 'carol bob alice')
  })
})
