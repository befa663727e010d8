import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  DEFAULT_MEMORY_MAX_BYTES,
  DEFAULT_MEMORY_MAX_GROUPS,
  InMemoryTopologyDescriptionPlugin,
} from '../../../src/plugin/builtin/memory.js'
import { isPermanentFailure, isTransientFailure } from '../../../src/plugin/spi.js'
import { runPluginConformance, sampleTopologyDescription } from '../../../src/plugin/tck/index.js'

runPluginConformance(
  'memory',
  async () => {
    const p = new InMemoryTopologyDescriptionPlugin()
    p.configure({ 'topology.description.max.bytes': '65536' })
    return p
  },
  { maxDescriptionBytes: 65536 },
)

const sizeOf = (tag: string): number =>
  Buffer.byteLength(JSON.stringify(sampleTopologyDescription(tag)), 'utf8')

describe('in-memory plugin', () => {
  test('by default it holds 10000 groups (64 MiB in total)', async () => {
    assert.equal(DEFAULT_MEMORY_MAX_BYTES, 64 * 1024 * 1024)
    const p = new InMemoryTopologyDescriptionPlugin()
    p.configure({})
    const d = { subtopologies: [], globalStores: [] }
    for (let i = 0; i < DEFAULT_MEMORY_MAX_GROUPS; i++) await p.setTopology(`g${i}`, 0, d)
    assert.equal(p.usage.groups, 10_000)
    assert.ok(isPermanentFailure(await p.setTopology('one-more', 0, d).catch((x: unknown) => x)))
    await p.close()
  })

  test('a push for a new group beyond max.groups fails permanently; known groups may still be replaced', async () => {
    const p = new InMemoryTopologyDescriptionPlugin()
    p.configure({ 'topology.description.memory.max.groups': '2' })
    await p.setTopology('a', 1, sampleTopologyDescription())
    await p.setTopology('b', 1, sampleTopologyDescription())
    const e = await p.setTopology('c', 1, sampleTopologyDescription()).then(
      () => null,
      (x: unknown) => x,
    )
    assert.ok(isPermanentFailure(e))
    assert.match((e as Error).message, /maximum of 2 groups \(topology\.description\.memory\.max\.groups\)/)
    await p.setTopology('a', 2, sampleTopologyDescription('z'))
    await p.deleteTopology('b')
    await p.setTopology('c', 1, sampleTopologyDescription())
    assert.deepEqual(p.usage.groups, 2)
    await p.close()
  })

  test('max.bytes bounds the total; replacing an entry counts only the difference', async () => {
    const one = sizeOf('a')
    const p = new InMemoryTopologyDescriptionPlugin()
    p.configure({ 'topology.description.memory.max.bytes': String(2 * one) })
    await p.setTopology('a', 1, sampleTopologyDescription('a'))
    await p.setTopology('b', 1, sampleTopologyDescription('b'))
    assert.deepEqual(p.usage, { groups: 2, bytes: 2 * one })
    await p.setTopology('b', 2, sampleTopologyDescription('c'))
    const e = await p.setTopology('c', 1, sampleTopologyDescription('c')).catch((x: unknown) => x)
    assert.ok(isPermanentFailure(e))
    assert.match((e as Error).message, /topology\.description\.memory\.max\.bytes/)
    assert.equal(await p.getTopology('c', 1), null)
    await p.deleteTopology('a')
    assert.deepEqual(p.usage, { groups: 1, bytes: one })
    await p.setTopology('c', 1, sampleTopologyDescription('c'))
    await p.close()
    assert.deepEqual(p.usage, { groups: 0, bytes: 0 })
  })

  test('calls after close reject as transient', async () => {
    const p = new InMemoryTopologyDescriptionPlugin()
    p.configure({})
    await p.close()
    const e = await p.getTopology('a', 1).catch((x: unknown) => x)
    assert.ok(isTransientFailure(e))
  })

  test('bad config values name the key', () => {
    const p = new InMemoryTopologyDescriptionPlugin()
    assert.throws(
      () => p.configure({ 'topology.description.memory.max.groups': '0' }),
      /Invalid value 0 for configuration topology\.description\.memory\.max\.groups: must be an integer >= 1/,
    )
    assert.throws(
      () => p.configure({ 'topology.description.memory.max.bytes': '12kb' }),
      /configuration topology\.description\.memory\.max\.bytes/,
    )
    assert.throws(
      () => p.configure({ 'topology.description.max.bytes': '-5' }),
      /topology\.description\.max\.bytes/,
    )
  })
})
