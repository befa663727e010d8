// Java HashMap iteration order, against orders printed by Java 17 (`new HashMap<>()` filled by put
// in the order given here, then `keySet()`), for TopicPartition keys (Kafka's hashCode) and strings.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { javaHashOrder, javaStringHash, topicPartitionHash } from '../../../src/clients/admin/java-order.js'

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
