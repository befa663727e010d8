import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ManualClock } from '../../src/coordinator/runtime/clock.js'
import { guardPlugin, type PluginOutcome } from '../../src/plugin/guard.js'
import {
  type StreamsGroupTopologyDescription,
  type StreamsGroupTopologyDescriptionPlugin,
  StreamsTopologyDescriptionPermanentFailureException,
  StreamsTopologyDescriptionTransientFailureException,
} from '../../src/plugin/spi.js'
import { sampleTopologyDescription } from '../../src/plugin/tck/index.js'

/** A plugin whose three data methods all behave as `behave` says; counts close() calls. */
function pluginThat(
  behave: () => unknown,
): StreamsGroupTopologyDescriptionPlugin & { closes: number; calls: number } {
  const p = {
    closes: 0,
    calls: 0,
    configure: () => undefined,
    setTopology: () => {
      p.calls++
      return behave()
    },
    getTopology: () => {
      p.calls++
      return behave()
    },
    deleteTopology: () => {
      p.calls++
      return behave()
    },
    close: async () => {
      p.closes++
    },
  }
  return p as unknown as StreamsGroupTopologyDescriptionPlugin & { closes: number; calls: number }
}

const d = sampleTopologyDescription()

/** The outcome of each of the three data methods under one behaviour, stripped of `cause`. */
async function outcomes(behave: () => unknown, timeoutMs?: number): Promise<unknown[]> {
  const g = guardPlugin(pluginThat(behave), { timeoutMs })
  const all: PluginOutcome<unknown>[] = [
    await g.setTopology('g', 1, d),
    await g.getTopology('g', 1),
    await g.deleteTopology('g'),
  ]
  return all.map((o) => (o.ok ? o : { kind: o.kind, message: o.message, origin: o.origin }))
}

function same(o: unknown): unknown[] {
  return [o, o, o]
}

describe('guardPlugin', () => {
  test('a synchronous throw is permanent: "Topology description plugin failed."', async () => {
    const boom = new Error('boom')
    assert.deepEqual(
      await outcomes(() => {
        throw boom
      }),
      same({ kind: 'permanent', message: 'Topology description plugin failed.', origin: 'sync-throw' }),
    )
    const r = await guardPlugin(
      pluginThat(() => {
        throw boom
      }),
    ).setTopology('g', 1, d)
    assert.equal(!r.ok && r.cause, boom)
  })

  test('a return value that is not a promise is permanent, with the same text', async () => {
    for (const v of [undefined, null, 42, {}]) {
      assert.deepEqual(
        await outcomes(() => v),
        same({ kind: 'permanent', message: 'Topology description plugin failed.', origin: 'not-a-promise' }),
      )
    }
  })

  test('a rejection without a reason is transient: "Plugin failure (no cause)."', async () => {
    for (const reason of [undefined, null]) {
      assert.deepEqual(
        await outcomes(() => Promise.reject(reason)),
        same({ kind: 'transient', message: 'Plugin failure (no cause).', origin: 'rejected' }),
      )
    }
  })

  test('a rejection with the permanent exception is permanent with its message', async () => {
    assert.deepEqual(
      await outcomes(() =>
        Promise.reject(new StreamsTopologyDescriptionPermanentFailureException('too big')),
      ),
      same({ kind: 'permanent', message: 'too big', origin: 'rejected' }),
    )
  })

  test('a permanent exception from another copy of the package is recognised by its brand', async () => {
    class Foreign extends Error {}
    const e = new Foreign('foreign permanent')
    Object.defineProperty(e, Symbol.for('topograph.plugin.failureKind'), { value: 'permanent' })
    assert.deepEqual(
      await outcomes(() => Promise.reject(e)),
      same({ kind: 'permanent', message: 'foreign permanent', origin: 'rejected' }),
    )
  })

  test('every other rejection is transient with its message, null when it has none', async () => {
    const cases: [unknown, string | null][] = [
      [new StreamsTopologyDescriptionTransientFailureException('db down'), 'db down'],
      [new Error('anything'), 'anything'],
      [new TypeError(''), null],
      ['a string', 'a string'],
      [7, '7'],
      [{ message: 'an object with a message' }, 'an object with a message'],
      [{ code: 1 }, null],
    ]
    for (const [reason, message] of cases) {
      assert.deepEqual(
        await outcomes(() => Promise.reject(reason)),
        same({ kind: 'transient', message, origin: 'rejected' }),
        `reason ${String(reason)}`,
      )
    }
  })

  test('success passes the value through; non-native thenables are accepted', async () => {
    const g = guardPlugin(pluginThat(() => Promise.resolve(d)))
    assert.deepEqual(await g.getTopology('g', 1), { ok: true, value: d })
    assert.deepEqual(await g.setTopology('g', 1, d), { ok: true, value: undefined })
    assert.deepEqual(await g.deleteTopology('g'), { ok: true, value: undefined })
    // biome-ignore lint/suspicious/noThenProperty: a plugin may return a non-native promise-like; this is one
    const thenable = { then: (resolve: (v: unknown) => void) => resolve(null) }
    assert.deepEqual(await guardPlugin(pluginThat(() => thenable)).getTopology('g', 1), {
      ok: true,
      value: null,
    })
  })

  test('getTopology: undefined reads as null; anything else that is not a description is a read error', async () => {
    assert.deepEqual(await guardPlugin(pluginThat(() => Promise.resolve(undefined))).getTopology('g', 1), {
      ok: true,
      value: null,
    })
    for (const bad of [{}, 'text', { subtopologies: [], globalStores: [{ source: {} }] }]) {
      const r = await guardPlugin(pluginThat(() => Promise.resolve(bad))).getTopology('g', 1)
      assert.equal(r.ok, false)
      assert.ok(!r.ok && r.origin === 'invalid-result' && r.kind === 'permanent')
      assert.match(
        !r.ok ? (r.message ?? '') : '',
        /^Topology description plugin returned an invalid description: /,
      )
    }
  })

  test('a call that does not settle within timeoutMs is transient (D5); a late settlement is ignored', async () => {
    let rejectLate: (e: Error) => void = () => undefined
    const t0 = performance.now()
    const o = await outcomes(
      () =>
        new Promise((_, reject) => {
          rejectLate = reject
        }),
      60,
    )
    assert.ok(performance.now() - t0 >= 3 * 55)
    assert.deepEqual(o, [
      {
        kind: 'transient',
        message: 'Topology description plugin setTopology did not complete within 60 ms.',
        origin: 'timeout',
      },
      {
        kind: 'transient',
        message: 'Topology description plugin getTopology did not complete within 60 ms.',
        origin: 'timeout',
      },
      {
        kind: 'transient',
        message: 'Topology description plugin deleteTopology did not complete within 60 ms.',
        origin: 'timeout',
      },
    ])
    // Rejecting after the deadline must not surface as an unhandled rejection (the test would fail).
    rejectLate(new Error('late'))
    await new Promise((r) => setTimeout(r, 10))
  })

  test('the deadline runs on the timers it is given (a manual clock): it fires when they say', async () => {
    const clock = new ManualClock(0)
    const g = guardPlugin(
      pluginThat(() => new Promise(() => {})),
      { timeoutMs: 5000, timers: clock },
    )
    let outcome = undefined as PluginOutcome<void> | undefined
    void g.deleteTopology('g').then((o) => {
      outcome = o
    })
    await new Promise((r) => setImmediate(r))
    assert.equal(clock.pendingTimers, 1)
    clock.advance(4999)
    await new Promise((r) => setImmediate(r))
    assert.equal(outcome, undefined, 'not before the deadline')
    clock.advance(1)
    await new Promise((r) => setImmediate(r))
    const fired = outcome as PluginOutcome<void> | undefined
    assert.ok(fired !== undefined && !fired.ok && fired.origin === 'timeout')
    // A call that settles in time clears its timer on the same clock.
    const quick = guardPlugin(
      pluginThat(() => Promise.resolve(d)),
      { timeoutMs: 5000, timers: clock },
    )
    assert.deepEqual(await quick.getTopology('g', 1), { ok: true, value: d })
    assert.equal(clock.pendingTimers, 0)
  })

  test('a call that settles before its deadline is not affected by it and leaves no timer behind', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
    const g = guardPlugin(
      pluginThat(() => Promise.resolve(d)),
      { timeoutMs: 60_000 },
    )
    assert.deepEqual(await g.getTopology('g', 1), { ok: true, value: d })
    assert.equal(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length, before)
  })

  test('close() reaches the plugin once; calls after close fail as transient without reaching it', async () => {
    const p = pluginThat(() => Promise.resolve(undefined))
    const g = guardPlugin(p)
    const [a, b] = await Promise.all([g.close(), g.close()])
    assert.deepEqual(a, { ok: true, value: undefined })
    assert.equal(a, b)
    assert.equal(p.closes, 1)
    const r = await g.setTopology('g', 1, d)
    assert.deepEqual(r.ok ? r : { kind: r.kind, message: r.message, origin: r.origin }, {
      kind: 'transient',
      message: 'Topology description plugin is closed.',
      origin: 'closed',
    })
    assert.equal(p.calls, 0)
  })

  test('a close() that throws or hangs still settles to an outcome', async () => {
    const throwing = {
      ...pluginThat(() => undefined),
      close: () => Promise.reject(new Error('close failed')),
    }
    const r = await guardPlugin(throwing).close()
    assert.ok(!r.ok && r.message === 'close failed')
    const hanging = { ...pluginThat(() => undefined), close: () => new Promise<void>(() => undefined) }
    const h = await guardPlugin(hanging, { timeoutMs: 30 }).close()
    assert.ok(!h.ok && h.origin === 'timeout')
  })

  test('timeoutMs must be an integer from 1 to 2147483647', () => {
    const p = pluginThat(() => undefined)
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 31]) {
      assert.throws(() => guardPlugin(p, { timeoutMs: bad }), RangeError)
    }
    assert.doesNotThrow(() => guardPlugin(p, { timeoutMs: 2 ** 31 - 1 }))
  })
})

describe('guardPlugin with a description type check', () => {
  test('a valid description read back is returned as is', async () => {
    const desc: StreamsGroupTopologyDescription = { subtopologies: [], globalStores: [] }
    const r = await guardPlugin(pluginThat(() => Promise.resolve(desc))).getTopology('g', 0)
    assert.ok(r.ok && r.value === desc)
  })
})
