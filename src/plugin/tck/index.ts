/**
 * `topograph/plugin/tck`: the plugin conformance kit. One call registers node:test tests that check a
 * plugin against the contract of docs/plugins.md:
 *
 * ```ts
 * import { runPluginConformance } from 'topograph/plugin/tck'
 * runPluginConformance('my-plugin', async () => {
 *   const p = new MyPlugin()
 *   await p.configure({ 'my.max.bytes': '65536' })
 *   return p
 * }, { maxDescriptionBytes: 65536 })
 * ```
 *
 * Run the file with `node --test`. The factory must return a configured plugin; it is called once per
 * test and every plugin it returns is closed by the test. Group ids are unique per run, so a factory
 * may hand out plugins that share one database.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { describe, test } from 'node:test'
import {
  isPermanentFailure,
  isTopologyDescription,
  isTransientFailure,
  type StreamsGroupTopologyDescription,
  type StreamsGroupTopologyDescriptionPlugin,
} from '../spi.js'

export interface PluginOutageHooks {
  /** Makes the plugin's backend unavailable (stop the database, drop the network…). */
  begin(): Promise<void>
  /** Brings the backend back. */
  end(): Promise<void>
  /** How long a call may take to reject while the backend is down (default 5000 ms). */
  readonly maxLatencyMs?: number
  /** How long the plugin may take to work again after end() (default 15000 ms). */
  readonly recoveryTimeoutMs?: number
}

export interface PluginConformanceOptions {
  /**
   * The largest description (UTF-8 bytes of its JSON) the plugin the factory returns accepts. A plugin
   * must enforce a size bound, so the size-bound test fails when this is missing.
   */
  readonly maxDescriptionBytes?: number
  /** Take the backend down and back; when given, the outage tests run (transient, fast, recovery). */
  readonly outage?: PluginOutageHooks
  /** Check that close() leaves no active handles, sockets or timers behind (default true). */
  readonly checkResources?: boolean
  /** Repetitions of each concurrency scenario (default 25). */
  readonly concurrencyRounds?: number
  /** Per-test timeout, so a hanging plugin fails instead of stalling the run (default 60000 ms). */
  readonly testTimeoutMs?: number
}

type Factory = () => Promise<StreamsGroupTopologyDescriptionPlugin>

/**
 * A small but complete description: two sub-topologies, a sink with a dynamic topic, a global store and
 * names that exercise JSON and SQL escaping (quotes, backslashes, non-ASCII, U+0000). `tag` ends up in
 * the names, so descriptions with different tags differ.
 */
export function sampleTopologyDescription(tag = 'a'): StreamsGroupTopologyDescription {
  return {
    subtopologies: [
      {
        id: '0',
        nodes: [
          {
            type: 'source',
            name: `KSTREAM-SOURCE-${tag}`,
            topics: ['orders', 'payments'],
            successors: ['proc'],
          },
          { type: 'processor', name: 'proc', stores: ['store-1'], successors: ['sink', 'dyn'] },
          { type: 'sink', name: 'sink', topic: 'out', successors: [] },
          { type: 'sink', name: 'dyn', topic: null, successors: [] },
        ],
      },
      {
        id: '1',
        nodes: [
          {
            type: 'source',
            name: `src'"\\; DROP TABLE x; -- ${tag}`,
            topics: ['ünïcödé-主题'],
            successors: ['p\u0000'],
          },
          { type: 'processor', name: 'p\u0000', stores: [], successors: [] },
        ],
      },
    ],
    globalStores: [
      {
        source: { type: 'source', name: 'global-src', topics: ['global-topic'], successors: ['global-proc'] },
        processor: { type: 'processor', name: 'global-proc', stores: ['global-store'], successors: [] },
      },
    ],
  }
}

/** A description whose JSON is at least `bytes` UTF-8 bytes long. */
export function descriptionOfSize(bytes: number, tag = 'big'): StreamsGroupTopologyDescription {
  const d = sampleTopologyDescription(tag)
  const topics = (d.subtopologies[0]!.nodes[0] as { topics: string[] }).topics
  const chunk = 'x'.repeat(1000)
  let size = Buffer.byteLength(JSON.stringify(d), 'utf8')
  while (size < bytes) {
    topics.push(chunk)
    size += chunk.length + 3
  }
  return d
}

function byteSize(d: StreamsGroupTopologyDescription): number {
  return Buffer.byteLength(JSON.stringify(d), 'utf8')
}

/** Calls `f`, failing the test if it throws synchronously or returns something that is not a promise. */
function mustReturnPromise<T>(what: string, f: () => Promise<T>): Promise<T> {
  let r: unknown
  try {
    r = f()
  } catch (e) {
    assert.fail(`${what} threw synchronously (${String(e)}); plugins must reject the promise instead`)
  }
  assert.ok(
    r !== null && typeof r === 'object' && typeof (r as { then?: unknown }).then === 'function',
    `${what} did not return a promise`,
  )
  return r as Promise<T>
}

/** Awaits a call that must reject, and returns the reason. */
async function rejection(what: string, p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (e) {
    assert.ok(e instanceof Error, `${what} rejected with ${String(e)}, not an Error`)
    return e
  }
  assert.fail(`${what} resolved; it should have rejected`)
}

function activeResources(): Map<string, number> {
  const m = new Map<string, number>()
  for (const r of process.getActiveResourcesInfo()) m.set(r, (m.get(r) ?? 0) + 1)
  return m
}

function extraResources(baseline: Map<string, number>): string[] {
  const out: string[] = []
  for (const [r, n] of activeResources()) {
    const extra = n - (baseline.get(r) ?? 0)
    if (extra > 0) out.push(`${r} x${extra}`)
  }
  return out
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Registers the conformance tests for one plugin under a `describe` named after it. */
export function runPluginConformance(
  name: string,
  factory: Factory,
  options: PluginConformanceOptions = {},
): void {
  const run = randomUUID().slice(0, 8)
  let n = 0
  const group = (label: string): string => `tck-${run}-${++n}-${label}`
  const rounds = options.concurrencyRounds ?? 25
  const timeout = options.testTimeoutMs ?? 60_000

  /** Runs `body` with a fresh plugin and closes it afterwards, whatever happens. */
  const withPlugin = async (
    body: (p: StreamsGroupTopologyDescriptionPlugin) => Promise<void>,
  ): Promise<void> => {
    const plugin = await factory()
    try {
      await body(plugin)
    } finally {
      await plugin.close()
    }
  }

  const get = (p: StreamsGroupTopologyDescriptionPlugin, g: string, e: number) =>
    mustReturnPromise(`getTopology(${g}, ${e})`, () => p.getTopology(g, e))
  const set = (
    p: StreamsGroupTopologyDescriptionPlugin,
    g: string,
    e: number,
    d: StreamsGroupTopologyDescription,
  ) => mustReturnPromise(`setTopology(${g}, ${e})`, () => p.setTopology(g, e, d))
  const del = (p: StreamsGroupTopologyDescriptionPlugin, g: string) =>
    mustReturnPromise(`deleteTopology(${g})`, () => p.deleteTopology(g))

  describe(`topology description plugin conformance: ${name}`, () => {
    test('getTopology returns what setTopology stored, as a valid description', { timeout }, () =>
      withPlugin(async (p) => {
        const g = group('roundtrip')
        const d = sampleTopologyDescription()
        await set(p, g, 3, d)
        const got = await get(p, g, 3)
        assert.ok(isTopologyDescription(got), 'getTopology did not return a valid description')
        assert.deepEqual(got, d)
      }),
    )

    test('getTopology returns null for a group with nothing stored', { timeout }, () =>
      withPlugin(async (p) => {
        assert.equal(await get(p, group('unknown'), 0), null)
      }),
    )

    test('getTopology returns null for another epoch', { timeout }, () =>
      withPlugin(async (p) => {
        const g = group('other-epoch')
        await set(p, g, 5, sampleTopologyDescription())
        assert.equal(await get(p, g, 4), null)
        assert.equal(await get(p, g, 6), null)
        assert.equal(await get(p, g, 0), null)
        assert.notEqual(await get(p, g, 5), null)
      }),
    )

    test('setTopology is idempotent on (group, epoch)', { timeout }, () =>
      withPlugin(async (p) => {
        const g = group('idempotent-set')
        const d = sampleTopologyDescription()
        await set(p, g, 1, d)
        await set(p, g, 1, d)
        await set(p, g, 1, sampleTopologyDescription())
        assert.deepEqual(await get(p, g, 1), d)
      }),
    )

    test('a group holds one epoch: a later setTopology replaces it, whatever its epoch', { timeout }, () =>
      withPlugin(async (p) => {
        const g = group('one-epoch')
        const d1 = sampleTopologyDescription('one')
        const d2 = sampleTopologyDescription('two')
        await set(p, g, 1, d1)
        await set(p, g, 2, d2)
        assert.equal(await get(p, g, 1), null, 'the superseded epoch 1 is still readable')
        assert.deepEqual(await get(p, g, 2), d2)
        // A group deleted and re-created on the coordinator starts again at a lower epoch.
        await set(p, g, 0, d1)
        assert.equal(await get(p, g, 2), null, 'epoch 2 is still readable after a set at epoch 0')
        assert.deepEqual(await get(p, g, 0), d1)
      }),
    )

    test('deleteTopology is idempotent and succeeds when nothing is stored', { timeout }, () =>
      withPlugin(async (p) => {
        const g = group('idempotent-delete')
        await del(p, g)
        await set(p, g, 2, sampleTopologyDescription())
        await del(p, g)
        assert.equal(await get(p, g, 2), null, 'getTopology returned a description after deleteTopology')
        await del(p, g)
        assert.equal(await get(p, g, 2), null)
        await set(p, g, 2, sampleTopologyDescription('again'))
        assert.deepEqual(await get(p, g, 2), sampleTopologyDescription('again'))
      }),
    )

    test('groups are independent', { timeout }, () =>
      withPlugin(async (p) => {
        const a = group('independent-a')
        const b = group('independent-b')
        await set(p, a, 1, sampleTopologyDescription('a'))
        await set(p, b, 1, sampleTopologyDescription('b'))
        await del(p, a)
        assert.equal(await get(p, a, 1), null)
        assert.deepEqual(await get(p, b, 1), sampleTopologyDescription('b'))
      }),
    )

    test("the stored description is not shared with the caller's objects", { timeout }, () =>
      withPlugin(async (p) => {
        const g = group('copy')
        const d = sampleTopologyDescription()
        await set(p, g, 1, d)
        d.subtopologies.pop()
        const first = await get(p, g, 1)
        assert.deepEqual(
          first,
          sampleTopologyDescription(),
          'changing the pushed object changed the stored one',
        )
        first!.globalStores.length = 0
        assert.deepEqual(
          await get(p, g, 1),
          sampleTopologyDescription(),
          'changing a result changed the stored one',
        )
      }),
    )

    test('concurrent setTopology calls at the same epoch all succeed', { timeout }, () =>
      withPlugin(async (p) => {
        for (let r = 0; r < rounds; r++) {
          const g = group('concurrent-same')
          const d = sampleTopologyDescription(String(r))
          await Promise.all(Array.from({ length: 5 }, () => set(p, g, 7, d)))
          assert.deepEqual(await get(p, g, 7), d)
        }
      }),
    )

    test('concurrent setTopology at two epochs leaves exactly one of them, intact', { timeout }, () =>
      withPlugin(async (p) => {
        for (let r = 0; r < rounds; r++) {
          const g = group('concurrent-set-set')
          const d1 = sampleTopologyDescription(`x${r}`)
          const d2 = sampleTopologyDescription(`y${r}`)
          await Promise.all([set(p, g, 1, d1), set(p, g, 2, d2)])
          const [g1, g2] = await Promise.all([get(p, g, 1), get(p, g, 2)])
          assert.ok((g1 === null) !== (g2 === null), `round ${r}: expected exactly one epoch to be stored`)
          if (g1 !== null) assert.deepEqual(g1, d1, `round ${r}: epoch 1 holds another epoch's description`)
          if (g2 !== null) assert.deepEqual(g2, d2, `round ${r}: epoch 2 holds another epoch's description`)
          // The coordinator reconciles by deleting or pushing again; both must work from here.
          await del(p, g)
          assert.equal(await get(p, g, 1), null)
          assert.equal(await get(p, g, 2), null)
        }
      }),
    )

    test('concurrent setTopology and deleteTopology leave the description or nothing', { timeout }, () =>
      withPlugin(async (p) => {
        for (let r = 0; r < rounds; r++) {
          const g = group('concurrent-set-delete')
          const d = sampleTopologyDescription(`s${r}`)
          if (r % 2 === 1) await set(p, g, 3, sampleTopologyDescription('before'))
          const calls = r % 3 === 0 ? [del(p, g), set(p, g, 4, d)] : [set(p, g, 4, d), del(p, g)]
          await Promise.all(calls)
          assert.equal(await get(p, g, 3), null, `round ${r}: the old epoch survived a delete`)
          const now = await get(p, g, 4)
          if (now !== null) assert.deepEqual(now, d, `round ${r}: a partial or foreign description is stored`)
          await set(p, g, 4, d)
          assert.deepEqual(await get(p, g, 4), d, `round ${r}: a set after the race did not store`)
          await del(p, g)
          assert.equal(await get(p, g, 4), null, `round ${r}: a delete after the race did not delete`)
        }
      }),
    )

    test('failures are rejections with Error reasons, never synchronous throws', { timeout }, () =>
      withPlugin(async (p) => {
        const g = group('no-throw')
        const odd: Array<[string, () => Promise<unknown>]> = [
          ['setTopology with a null description', () => p.setTopology(g, 1, null as never)],
          ['setTopology with a malformed description', () => p.setTopology(g, 1, { nodes: 1 } as never)],
          ['setTopology with epoch -1', () => p.setTopology(g, -1, sampleTopologyDescription())],
          ['setTopology with epoch NaN', () => p.setTopology(g, Number.NaN, sampleTopologyDescription())],
          [
            'setTopology with a null group id',
            () => p.setTopology(null as never, 1, sampleTopologyDescription()),
          ],
          ['getTopology with epoch -1', () => p.getTopology(g, -1)],
          ['getTopology with a null group id', () => p.getTopology(null as never, 1)],
          ['deleteTopology with a null group id', () => p.deleteTopology(null as never)],
        ]
        if (options.maxDescriptionBytes !== undefined) {
          const big = descriptionOfSize(options.maxDescriptionBytes + 1)
          odd.push(['setTopology with an oversized description', () => p.setTopology(g, 1, big)])
        }
        for (const [what, call] of odd) {
          try {
            await mustReturnPromise(what, call)
          } catch (e) {
            if (e instanceof assert.AssertionError) throw e
            assert.ok(e instanceof Error, `${what} rejected with ${String(e)}, not an Error`)
          }
        }
      }),
    )

    test(
      'a description larger than the maximum is rejected permanently and changes nothing',
      { timeout },
      () =>
        withPlugin(async (p) => {
          const max = options.maxDescriptionBytes
          assert.ok(
            max !== undefined && Number.isSafeInteger(max) && max > 0,
            'options.maxDescriptionBytes is required: a plugin must enforce a maximum description size, and the kit needs to know it',
          )
          const g = group('too-large')
          const small = sampleTopologyDescription()
          await set(p, g, 1, small)
          const big = descriptionOfSize(max + 1)
          assert.ok(byteSize(big) > max)
          const e = await rejection('setTopology with an oversized description', set(p, g, 2, big))
          assert.ok(isPermanentFailure(e), `an oversized description must fail permanently, got ${String(e)}`)
          assert.ok(!isTransientFailure(e))
          assert.equal(await get(p, g, 2), null, 'the rejected description is readable')
          assert.deepEqual(await get(p, g, 1), small, 'the rejected push changed what the group held')
          const fits = descriptionOfSize(Math.floor(max / 2), 'fits')
          if (byteSize(fits) <= max) {
            await set(p, g, 3, fits)
            assert.deepEqual(await get(p, g, 3), fits)
          }
        }),
    )

    const outage = options.outage
    if (outage !== undefined) {
      test(
        'while the backend is down, every call rejects as transient, quickly; then it recovers',
        { timeout },
        () =>
          withPlugin(async (p) => {
            const g = group('outage')
            const before = sampleTopologyDescription('before')
            await set(p, g, 1, before)
            const maxLatency = outage.maxLatencyMs ?? 5_000
            await outage.begin()
            try {
              const calls: ReadonlyArray<[string, () => Promise<unknown>]> = [
                ['setTopology', () => p.setTopology(g, 2, sampleTopologyDescription('during'))],
                ['getTopology', () => p.getTopology(g, 1)],
                ['deleteTopology', () => p.deleteTopology(g)],
              ]
              for (const [what, call] of calls) {
                const t0 = performance.now()
                const e = await rejection(`${what} during the outage`, mustReturnPromise(what, call))
                const took = performance.now() - t0
                assert.ok(
                  isTransientFailure(e),
                  `${what} during the outage: expected a transient failure, got ${String(e)}`,
                )
                assert.ok(
                  took <= maxLatency,
                  `${what} took ${Math.round(took)} ms to fail (limit ${maxLatency} ms)`,
                )
              }
            } finally {
              await outage.end()
            }
            const deadline = performance.now() + (outage.recoveryTimeoutMs ?? 15_000)
            const after = sampleTopologyDescription('after')
            for (;;) {
              try {
                await set(p, g, 3, after)
                break
              } catch (e) {
                if (e instanceof assert.AssertionError) throw e
                if (performance.now() > deadline)
                  assert.fail(`the plugin did not recover after the outage: ${String(e)}`)
                await sleep(200)
              }
            }
            assert.deepEqual(await get(p, g, 3), after)
            assert.equal(await get(p, g, 1), null)
            await del(p, g)
            assert.equal(await get(p, g, 3), null)
          }),
      )
    }

    test('close() releases everything and later calls still settle without throwing', {
      timeout,
    }, async () => {
      const baseline = activeResources()
      const p = await factory()
      const g = group('close')
      await set(p, g, 1, sampleTopologyDescription())
      await get(p, g, 1)
      await mustReturnPromise('close()', () => p.close())
      const afterClose: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
        ['setTopology after close', () => p.setTopology(g, 2, sampleTopologyDescription())],
        ['getTopology after close', () => p.getTopology(g, 1)],
        ['deleteTopology after close', () => p.deleteTopology(g)],
      ]
      for (const [what, call] of afterClose) {
        await mustReturnPromise(what, call).catch((e: unknown) => {
          assert.ok(e instanceof Error, `${what} rejected with ${String(e)}, not an Error`)
        })
      }
      if (options.checkResources === false) return
      // Sockets and timers may need a turn or two of the event loop to be torn down.
      let extra = extraResources(baseline)
      for (let i = 0; i < 40 && extra.length > 0; i++) {
        await sleep(50)
        extra = extraResources(baseline)
      }
      assert.deepEqual(extra, [], `close() left active resources behind: ${extra.join(', ')}`)
    })
  })
}
