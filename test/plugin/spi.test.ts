import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import * as publicApi from '../../src/plugin/index.js'
import {
  isPermanentFailure,
  isTopologyDescription,
  isTransientFailure,
  StreamsTopologyDescriptionPermanentFailureException,
  StreamsTopologyDescriptionTransientFailureException,
  topologyDescriptionProblem,
} from '../../src/plugin/spi.js'
import { sampleTopologyDescription } from '../../src/plugin/tck/index.js'

describe('plugin SPI', () => {
  test('the exceptions are Errors with their Kafka names, a cause, and a brand', () => {
    const cause = new Error('root')
    const p = new StreamsTopologyDescriptionPermanentFailureException('too big', { cause })
    const t = new StreamsTopologyDescriptionTransientFailureException('down')
    assert.ok(p instanceof Error && t instanceof Error)
    assert.equal(p.name, 'StreamsTopologyDescriptionPermanentFailureException')
    assert.equal(t.name, 'StreamsTopologyDescriptionTransientFailureException')
    assert.equal(p.cause, cause)
    assert.deepEqual([isPermanentFailure(p), isTransientFailure(p)], [true, false])
    assert.deepEqual([isPermanentFailure(t), isTransientFailure(t)], [false, true])
    const brand = Object.getOwnPropertyDescriptor(p, Symbol.for('topograph.plugin.failureKind'))
    assert.deepEqual([brand?.value, brand?.enumerable], ['permanent', false], 'a non-enumerable brand')
  })

  test('the brand check recognises a copy of the exception from another package copy, and nothing else', () => {
    const foreign = Object.defineProperty(new Error('x'), Symbol.for('topograph.plugin.failureKind'), {
      value: 'transient',
    })
    assert.ok(isTransientFailure(foreign))
    for (const x of [undefined, null, 'permanent', new Error('plain'), { kind: 'permanent' }]) {
      assert.ok(!isPermanentFailure(x) && !isTransientFailure(x), String(x))
    }
  })

  test('isTopologyDescription accepts descriptions and names what is wrong with anything else', () => {
    assert.ok(isTopologyDescription(sampleTopologyDescription()))
    assert.ok(isTopologyDescription({ subtopologies: [], globalStores: [], extra: 1 }))
    const cases: [unknown, string][] = [
      [null, 'the description is not an object'],
      [[], 'the description is not an object'],
      [{ globalStores: [] }, 'subtopologies is not an array'],
      [{ subtopologies: [] }, 'globalStores is not an array'],
      [{ subtopologies: [{ id: 0, nodes: [] }], globalStores: [] }, 'subtopologies[0].id is not a string'],
      [
        {
          subtopologies: [{ id: '0', nodes: [{ type: 'sink', name: 'k', topic: 3, successors: [] }] }],
          globalStores: [],
        },
        'subtopologies[0].nodes[0].topic is not a string or null',
      ],
      [
        {
          subtopologies: [{ id: '0', nodes: [{ type: 'source', name: 's', topics: 'a', successors: [] }] }],
          globalStores: [],
        },
        'subtopologies[0].nodes[0].topics is not an array of strings',
      ],
      [
        {
          subtopologies: [{ id: '0', nodes: [{ type: 'weird', name: 's', successors: [] }] }],
          globalStores: [],
        },
        "subtopologies[0].nodes[0].type is not 'source', 'processor' or 'sink'",
      ],
      [
        {
          subtopologies: [
            { id: '0', nodes: [{ type: 'processor', name: 'p', stores: [], successors: [1] }] },
          ],
          globalStores: [],
        },
        'subtopologies[0].nodes[0].successors is not an array of strings',
      ],
      [
        {
          subtopologies: [],
          globalStores: [
            {
              source: { type: 'processor', name: 'p', stores: [], successors: [] },
              processor: { type: 'processor', name: 'p', stores: [], successors: [] },
            },
          ],
        },
        'globalStores[0].source is not a source node',
      ],
    ]
    for (const [x, problem] of cases) {
      assert.equal(topologyDescriptionProblem(x), problem)
      assert.equal(isTopologyDescription(x), false)
    }
  })

  test('topograph/plugin exports the SPI, the guard and the loader', () => {
    for (const name of [
      'StreamsTopologyDescriptionPermanentFailureException',
      'StreamsTopologyDescriptionTransientFailureException',
      'isPermanentFailure',
      'isTransientFailure',
      'isTopologyDescription',
      'guardPlugin',
      'loadTopologyDescriptionPlugin',
      'PluginLoadError',
    ]) {
      assert.equal(typeof (publicApi as Record<string, unknown>)[name], 'function', name)
    }
  })
})
