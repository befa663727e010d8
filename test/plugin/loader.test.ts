import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, describe, test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { InMemoryTopologyDescriptionPlugin } from '../../src/plugin/builtin/memory.js'
import { SqliteTopologyDescriptionPlugin } from '../../src/plugin/builtin/sqlite.js'
import {
  loadGuardedTopologyDescriptionPlugin,
  loadTopologyDescriptionPlugin,
  PLUGIN_CLASS_KEY,
  PluginLoadError,
  pluginTimeoutMs,
} from '../../src/plugin/loader.js'
import { isPermanentFailure } from '../../src/plugin/spi.js'
import { sampleTopologyDescription } from '../../src/plugin/tck/index.js'
import { events } from './fixtures/plugins.js'

const KEY = 'group.streams.topology.description.plugin.class'
const fixture = 'test/plugin/fixtures/plugins.ts'
const tmp = mkdtempSync(join(tmpdir(), 'topograph-loader-'))
after(() => rmSync(tmp, { recursive: true, force: true }))

async function loadWith(value: string, extra: Record<string, string> = {}, cwd?: string) {
  const p = await loadTopologyDescriptionPlugin({ [KEY]: value, ...extra }, cwd === undefined ? {} : { cwd })
  assert.ok(p !== null)
  return p
}

/** Expects a PluginLoadError for `value` whose message names the key and matches `reason`. */
async function expectLoadError(value: string, reason: RegExp, extra: Record<string, string> = {}) {
  await assert.rejects(loadTopologyDescriptionPlugin({ [KEY]: value, ...extra }), (e: unknown) => {
    assert.ok(e instanceof PluginLoadError, `not a PluginLoadError: ${String(e)}`)
    assert.equal(e.key, KEY)
    assert.ok(
      e.message.startsWith(`Invalid value ${value} for configuration ${KEY}: `),
      `message does not name the key: ${e.message}`,
    )
    assert.match(e.message, reason)
    return true
  })
}

describe('loadTopologyDescriptionPlugin', () => {
  test('the key is the one Kafka uses', () => {
    assert.equal(PLUGIN_CLASS_KEY, KEY)
  })

  test('unset or blank means no plugin', async () => {
    assert.equal(await loadTopologyDescriptionPlugin({}), null)
    assert.equal(await loadTopologyDescriptionPlugin({ [KEY]: '  ' }), null)
  })

  test('alias memory: the in-memory plugin, configured with the broker configs', async () => {
    const p = await loadWith('memory', { 'topology.description.memory.max.groups': '1' })
    assert.ok(p instanceof InMemoryTopologyDescriptionPlugin)
    await p.setTopology('a', 1, sampleTopologyDescription())
    assert.ok(
      isPermanentFailure(await p.setTopology('b', 1, sampleTopologyDescription()).catch((e: unknown) => e)),
    )
    await p.close()
  })

  test('alias sqlite: a file under data.dir', async () => {
    const p = await loadWith('sqlite', { 'data.dir': join(tmp, 'data') })
    assert.ok(p instanceof SqliteTopologyDescriptionPlugin)
    await p.close()
  })

  test('alias postgres: configure fails without a URL, and the error names the key and the cause', async () => {
    await expectLoadError(
      'postgres',
      /configure\(\) failed: Missing configuration topology\.description\.postgres\.url/,
    )
  })

  test('a path relative to the working directory (with or without ./), the default export is a class', async () => {
    for (const v of [fixture, `./${fixture}`]) {
      events.length = 0
      const p = await loadWith(v, { 'some.unknown.key': 'kept' })
      assert.equal((p as unknown as { label: string }).label, 'default')
      const configs = (p as unknown as { configs: Record<string, string> }).configs
      assert.deepEqual(
        configs,
        { [KEY]: v, 'some.unknown.key': 'kept' },
        'configure() must receive every config',
      )
      assert.ok(Object.isFrozen(configs))
      assert.deepEqual(events, ['default:configure'])
    }
  })

  test('a path relative to a given working directory', async () => {
    const p = await loadWith('fixtures/plugins.ts#NamedPlugin', {}, resolve('test/plugin'))
    assert.equal((p as unknown as { label: string }).label, 'named')
  })

  test('an absolute path and a file: URL', async () => {
    const abs = resolve(fixture)
    assert.equal(((await loadWith(`${abs}#NamedPlugin`)) as unknown as { label: string }).label, 'named')
    const url = pathToFileURL(abs).href
    assert.equal(((await loadWith(url)) as unknown as { label: string }).label, 'default')
  })

  test('#ExportName picks a class, a factory, an async factory or a pre-class constructor', async () => {
    const labels: string[] = []
    for (const name of ['NamedPlugin', 'pluginFactory', 'asyncPluginFactory', 'LegacyPlugin']) {
      const p = await loadWith(`${fixture}#${name}`)
      labels.push((p as unknown as { label: string }).label)
    }
    assert.deepEqual(labels, ['named', 'factory', 'async-factory', 'legacy'])
  })

  test('a package specifier, resolved from the working directory', async () => {
    const project = join(tmp, 'project')
    const pkg = join(project, 'node_modules', 'my-topology-plugin')
    mkdirSync(pkg, { recursive: true })
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: 'my-topology-plugin', main: 'index.cjs' }),
    )
    writeFileSync(
      join(pkg, 'index.cjs'),
      `class P {
        configure(c) { this.seen = c['x'] }
        async setTopology() {}
        async getTopology() { return null }
        async deleteTopology() {}
        async close() {}
      }
      module.exports = P
      module.exports.Other = class extends P { constructor() { super(); this.other = true } }`,
    )
    const p = await loadWith('my-topology-plugin', { x: 'y' }, project)
    assert.equal((p as unknown as { seen: string }).seen, 'y')
    const q = await loadWith('my-topology-plugin#Other', {}, project)
    assert.equal((q as unknown as { other: boolean }).other, true)
  })

  test('a module that does not exist', async () => {
    await expectLoadError('./no/such/plugin.js', /cannot load module \.\/no\/such\/plugin\.js: no such file/)
    await expectLoadError('no-such-package-xyz', /cannot load module no-such-package-xyz: /)
  })

  test('a missing export, a missing default export, an empty export name', async () => {
    await expectLoadError(
      `${fixture}#Nope`,
      /module test\/plugin\/fixtures\/plugins\.ts has no export named Nope/,
    )
    await expectLoadError(
      'test/plugin/fixtures/no-default.ts',
      /has no default export \(name the export with .*#ExportName\)/,
    )
    await expectLoadError(`${fixture}#`, /the export name after # is empty/)
  })

  test('an export that is neither a class nor a factory, or does not make a plugin', async () => {
    await expectLoadError(
      `${fixture}#notAFunction`,
      /cannot create the plugin from export notAFunction of .*: it is an object, not a class or a factory function$/,
    )
    await expectLoadError(
      `${fixture}#NotAPlugin`,
      /did not produce a StreamsGroupTopologyDescriptionPlugin \(missing methods configure, getTopology, deleteTopology, close\)/,
    )
    await expectLoadError(`${fixture}#throwingFactory`, /cannot create the plugin from .*: factory exploded/)
    await expectLoadError(`${fixture}#events`, /export events of .*: it is an object, not a class/)
  })

  test('configure() throwing stops loading and closes the half-built plugin', async () => {
    events.length = 0
    await expectLoadError(`${fixture}#ConfigureThrows`, /configure\(\) failed: bad setting x\.y$/)
    assert.deepEqual(events, ['configure-throws:configure', 'configure-throws:close'])
  })

  test('configure() that never completes fails at the plugin timeout', async () => {
    await expectLoadError(
      `${fixture}#ConfigureHangs`,
      /configure\(\) failed: configure\(\) did not complete within 100 ms/,
      {
        'group.streams.topology.description.plugin.timeout.ms': '100',
      },
    )
  })

  test('the plugin timeout must be a positive integer; the error names its key', async () => {
    assert.equal(pluginTimeoutMs({}), undefined)
    assert.equal(pluginTimeoutMs({ 'group.streams.topology.description.plugin.timeout.ms': '250' }), 250)
    for (const bad of ['0', '-1', '1.5', 'abc', '99999999999']) {
      assert.throws(
        () => pluginTimeoutMs({ 'group.streams.topology.description.plugin.timeout.ms': bad }),
        (e: unknown) =>
          e instanceof PluginLoadError &&
          e.message ===
            `Invalid value ${bad} for configuration group.streams.topology.description.plugin.timeout.ms: must be an integer from 1 to 2147483647 (milliseconds)`,
      )
    }
  })

  test('loadGuardedTopologyDescriptionPlugin applies the timeout to every call', async () => {
    assert.equal(await loadGuardedTopologyDescriptionPlugin({}), null)
    const g = await loadGuardedTopologyDescriptionPlugin({
      [KEY]: 'memory',
      'group.streams.topology.description.plugin.timeout.ms': '1000',
    })
    assert.ok(g !== null)
    assert.ok(g.plugin instanceof InMemoryTopologyDescriptionPlugin)
    assert.deepEqual(await g.setTopology('g', 1, sampleTopologyDescription()), { ok: true, value: undefined })
    assert.deepEqual(await g.getTopology('g', 1), { ok: true, value: sampleTopologyDescription() })
    assert.deepEqual(await g.close(), { ok: true, value: undefined })
  })
})
