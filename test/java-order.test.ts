// Java HashMap iteration order, against orders printed by Java 17 (`new HashMap<>()` filled by put
// in the order given here, then `keySet()`), for TopicPartition keys (Kafka's hashCode) and strings;
// and for String keys put and removed (java.util.HashMap<String, Boolean>, Java 17+).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { JavaHashMap, javaHashOrder, javaStringHash, topicPartitionHash } from '../src/java-order.js'

const tps = (list: Array<[string, number]>) =>
  javaHashOrder(list, ([t, p]) => topicPartitionHash(t, p)).map(([t, p]) => `${t}-${p}`)

describe('javaHashOrder', () => {
  it('matches Java for a few partitions of two topics', () => {
    assert.deepEqual(
      tps([
        ['orders', 0],
        ['orders', 1],
        ['orders', 2],
        ['payments', 0],
        ['payments', 1],
      ]),
      ['payments-0', 'payments-1', 'orders-0', 'orders-1', 'orders-2'],
    )
  })

  it('matches Java across resizes (36 keys: a table of 64)', () => {
    const keys: Array<[string, number]> = []
    for (const t of ['foo-abc', 'streams-input', 'x']) for (let p = 0; p < 12; p++) keys.push([t, p])
    assert.deepEqual(
      tps(keys).join(', '),
      'foo-abc-6, streams-input-4, foo-abc-8, streams-input-2, foo-abc-10, streams-input-8, streams-input-6, ' +
        'foo-abc-0, streams-input-10, foo-abc-2, x-11, foo-abc-4, x-9, x-7, x-5, x-3, x-1, streams-input-0, ' +
        'foo-abc-5, streams-input-5, foo-abc-7, streams-input-3, foo-abc-9, streams-input-9, foo-abc-11, ' +
        'streams-input-7, streams-input-11, foo-abc-1, foo-abc-3, x-10, x-8, x-6, x-4, x-2, x-0, streams-input-1',
    )
  })

  it('matches Java at the first resize (13 keys: a table of 32)', () => {
    const keys: Array<[string, number]> = []
    for (let p = 0; p < 13; p++) keys.push(['t', p])
    assert.deepEqual(
      tps(keys),
      [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0].map((p) => `t-${p}`),
    )
  })

  it('matches Java for group ids (String.hashCode)', () => {
    assert.deepEqual(
      javaHashOrder(['app-a', 'app-b', 'orders-app', 'zeta', 'streams-group-command-test'], javaStringHash),
      ['zeta', 'orders-app', 'streams-group-command-test', 'app-b', 'app-a'],
    )
    assert.equal(javaStringHash('streams-group-command-test'), -721396356)
  })

  it('matches Java for maps made with new HashMap<>(n)', () => {
    const keys = ['app-a', 'app-b', 'orders-app', 'zeta', 'streams-group-command-test', 'x', 'yy']
    const expected: Record<number, string[]> = {
      1: ['app-a'],
      2: ['app-b', 'app-a'],
      3: ['app-b', 'app-a', 'orders-app'],
      5: ['zeta', 'streams-group-command-test', 'app-b', 'app-a', 'orders-app'],
      7: ['zeta', 'yy', 'orders-app', 'x', 'streams-group-command-test', 'app-b', 'app-a'],
    }
    for (const [n, order] of Object.entries(expected)) {
      assert.deepEqual(javaHashOrder(keys.slice(0, Number(n)), javaStringHash, Number(n)), order, `n=${n}`)
    }
  })
})

function order(ops: readonly string[]): string {
  const m = new JavaHashMap<string, boolean>(javaStringHash)
  for (const op of ops) {
    if (op.startsWith('-')) m.delete(op.slice(1))
    else m.set(op.slice(1), true)
  }
  return m.keys().join(' ')
}

describe('JavaHashMap: puts and removes', () => {
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
