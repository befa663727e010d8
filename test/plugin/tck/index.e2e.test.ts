import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { describe, test } from 'node:test'
import { promisify } from 'node:util'
import { isTopologyDescription } from '../../../src/plugin/spi.js'
import { descriptionOfSize, sampleTopologyDescription } from '../../../src/plugin/tck/index.js'

const run = promisify(execFile)

/** Runs the kit against one broken plugin in a child process; returns the names of the failed tests. */
async function failuresFor(broken: string): Promise<string[]> {
  const r = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      '--test-reporter=spec',
      'test/plugin/fixtures/broken-plugin-conformance.ts',
    ],
    // NODE_TEST_CONTEXT would make the child report to this runner instead of printing its results.
    { env: { ...process.env, NODE_TEST_CONTEXT: undefined, BROKEN: broken }, maxBuffer: 16 * 1024 * 1024 },
  ).catch((e: { stdout?: string; code?: number }) => ({ stdout: e.stdout ?? '', code: e.code }))
  const failed = new Set<string>()
  for (const line of r.stdout.split('\n')) {
    const m = /^ {2}✖ (.*?) \(\d/.exec(line)
    if (m) failed.add(m[1]!)
  }
  return [...failed].sort()
}

describe('the conformance kit fails broken plugins', () => {
  test('a plugin that keeps superseded epochs and shares objects with its caller', async () => {
    assert.deepEqual(await failuresFor('keeps-epochs'), [
      'a description larger than the maximum is rejected permanently and changes nothing',
      'a group holds one epoch: a later setTopology replaces it, whatever its epoch',
      'concurrent setTopology at two epochs leaves exactly one of them, intact',
      "the stored description is not shared with the caller's objects",
    ])
  })

  test('options without maxDescriptionBytes fail the size-bound test', async () => {
    assert.deepEqual(await failuresFor('no-size-bound'), [
      'a description larger than the maximum is rejected permanently and changes nothing',
    ])
  })

  test('a synchronous throw', async () => {
    assert.deepEqual(await failuresFor('throws-sync'), [
      'failures are rejections with Error reasons, never synchronous throws',
    ])
  })

  test('a size bound larger than the plugin claims is caught', async () => {
    // The plugin accepts 5000 bytes while the options claim 4000: a 4001-byte push is stored.
    assert.deepEqual(await failuresFor('transient-size'), [
      'a description larger than the maximum is rejected permanently and changes nothing',
    ])
  })

  test('a plugin that leaves a timer running after close()', async () => {
    assert.deepEqual(await failuresFor('leaks-timer'), [
      'close() releases everything and later calls still settle without throwing',
    ])
  })
})

describe('kit helpers', () => {
  test('sampleTopologyDescription is a valid description; tags make different ones', () => {
    assert.ok(isTopologyDescription(sampleTopologyDescription()))
    assert.notDeepEqual(sampleTopologyDescription('a'), sampleTopologyDescription('b'))
  })

  test('descriptionOfSize reaches the size asked for, and not by much more', () => {
    for (const n of [10, 5_000, 100_001]) {
      const size = Buffer.byteLength(JSON.stringify(descriptionOfSize(n)), 'utf8')
      assert.ok(size >= n && size < n + 1_100, `asked ${n}, got ${size}`)
    }
  })
})
