// KIP-1331 plugin lifecycle: configured once at start-up with every configuration entry, closed once
// at shutdown; a plugin that cannot be loaded stops start-up with a message naming the key.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pluginFiles, startKipServer } from '../helpers/kip1331.js'
import { rmSync } from 'node:fs'
import { startTestServer, tempDataDir } from '../server/harness.js'

test('the plugin is configured once and closed once', async () => {
  const plugin = pluginFiles()
  try {
    const kip = await startKipServer({ pluginFiles: plugin, overrides: { 'some.unknown.key': 'x' } })
    await kip.stop()
    const ops = plugin.calls().map((c) => c.op)
    assert.deepEqual(ops, ['configure', 'close'])
  } finally {
    plugin.remove()
  }
})

test('a plugin module that cannot be loaded stops start-up, naming the key', async () => {
  const dataDir = tempDataDir()
  try {
    await assert.rejects(
      startTestServer(
        { 'group.streams.topology.description.plugin.class': './no/such/plugin.js' },
        {},
        dataDir,
      ),
      (e: Error) => e.message.includes('group.streams.topology.description.plugin.class'),
    )
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})
