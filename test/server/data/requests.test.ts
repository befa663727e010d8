// The data-plane handlers' shared pieces: per-request authorization answers and the grouping of
// per-partition answers into topic entries.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { groupByTopic, TopicAuthorizations } from '../../../src/server/data/requests.js'
import type { RequestContext } from '../../../src/server/router.js'

function contextAsking(
  answer: (operation: string, topic: string) => boolean,
  asked: string[],
): RequestContext {
  return {
    principal: 'User:alice',
    server: {
      authorizer: {
        authorize: (_principal: string, operation: string, _type: string, topic: string) => {
          asked.push(`${operation} ${topic}`)
          return answer(operation, topic)
        },
      },
    },
  } as unknown as RequestContext
}

describe('TopicAuthorizations', () => {
  it('asks the authorizer once per (operation, topic) pair of a request, whatever the order', () => {
    const asked: string[] = []
    const auth = new TopicAuthorizations(contextAsking((op, t) => op === 'WRITE' && t !== 'b', asked))
    const pairs: ['READ' | 'WRITE', string, boolean][] = [
      ['WRITE', 'a', true],
      ['WRITE', 'a', true],
      ['WRITE', 'b', false],
      ['READ', 'a', false],
      ['WRITE', 'a', true],
      ['WRITE', 'b', false],
      ['READ', 'a', false],
      ['WRITE', 'c', true],
    ]
    for (const [op, topic, expected] of pairs)
      assert.equal(auth.allowed(op, topic), expected, `${op} ${topic}`)
    assert.deepEqual(asked, ['WRITE a', 'WRITE b', 'READ a', 'WRITE c'])
  })

  it('keeps a denial of the first pair as well as a grant', () => {
    const asked: string[] = []
    const auth = new TopicAuthorizations(contextAsking(() => false, asked))
    assert.equal(auth.allowed('READ', 't'), false)
    assert.equal(auth.allowed('READ', 't'), false)
    assert.deepEqual(asked, ['READ t'])
  })
})

describe('groupByTopic', () => {
  it('groups consecutive items of one topic, in order, a topic coming back making a new entry', () => {
    const items = [
      { t: 'x', p: 0 },
      { t: 'x', p: 1 },
      { t: 'y', p: 0 },
      { t: 'x', p: 2 },
    ]
    const out = groupByTopic(
      items,
      (i) => i.t,
      (i, index) => `${i.t}${i.p}@${index}`,
      (topic, partitions, first) => ({ topic, partitions, first: first.p }),
    )
    assert.deepEqual(out, [
      { topic: 'x', partitions: ['x0@0', 'x1@1'], first: 0 },
      { topic: 'y', partitions: ['y0@2'], first: 0 },
      { topic: 'x', partitions: ['x2@3'], first: 2 },
    ])
    assert.deepEqual(
      groupByTopic(
        [],
        () => '',
        () => 0,
        () => 0,
      ),
      [],
    )
  })
})
