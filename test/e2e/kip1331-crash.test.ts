// KIP-1331 crash safety: a real `topograph start` process (sqlite coordinator storage, the
// controllable plugin over its sqlite backend) is killed with SIGKILL at a named point — between the
// −2 barrier and the plugin call, between the plugin's success and the bookkeeping write, inside
// DeleteGroups and inside the cleanup cycle. After a restart on the same data, the invariant checker
// finds no leak and no loss, and the group converges (re-solicited push, or completed delete).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  deleteGroups,
  descriptionEpochs,
  joinMember,
  type KipServer,
  type PluginFiles,
  push,
  waitFor,
} from '../helpers/kip1331.js'
import { crashAndRestart, pluginRows } from '../helpers/kip1331-invariants.js'
import type { StreamsMember } from '../helpers/streams-member.js'
import { WireClient } from '../server/wire-client.js'

const dbPath = (plugin: PluginFiles) => plugin.configs['topology.description.sqlite.path']

async function joined(port: number, groupId: string, opened: { close(): void }[]): Promise<StreamsMember> {
  const m = await joinMember(port, groupId)
  opened.push(m)
  assert.equal((await m.heartbeat()).topologyDescriptionRequired, true)
  return m
}

/** After a restart the member's session lives on: it heartbeats, is asked again, pushes, converges. */
async function rePush(kip: KipServer, groupId: string, opened: { close(): void }[]): Promise<void> {
  const m = await joinMember(kip.port, groupId, `${groupId}-m2`)
  opened.push(m)
  assert.equal((await m.heartbeat()).topologyDescriptionRequired, true)
  assert.equal((await push(m.client, groupId, m.memberId, 0)).errorCode, 0)
  assert.deepEqual(await descriptionEpochs(kip.service, groupId), { stored: 0, failed: -1 })
}

test('kill -9 between the barrier and the plugin call', { timeout: 90_000 }, async () => {
  await crashAndRestart(
    'barrier → plugin',
    async (proc, plugin, opened) => {
      const m = await joined(proc.port, 'k-before', opened)
      plugin.control({ set: { 'k-before': { action: 'crash-before' } } })
      await push(m.client, 'k-before', m.memberId, 0).catch(() => undefined)
    },
    async (kip, plugin, opened) => {
      assert.deepEqual(await descriptionEpochs(kip.service, 'k-before'), { stored: -2, failed: -1 })
      assert.equal(pluginRows(dbPath(plugin)).has('k-before'), false)
      await rePush(kip, 'k-before', opened)
    },
  )
})

test('kill -9 between the plugin success and the bookkeeping write', { timeout: 90_000 }, async () => {
  await crashAndRestart(
    'plugin → bookkeeping',
    async (proc, plugin, opened) => {
      const m = await joined(proc.port, 'k-after', opened)
      plugin.control({ set: { 'k-after': { action: 'crash-after' } } })
      await push(m.client, 'k-after', m.memberId, 0).catch(() => undefined)
    },
    async (kip, plugin, opened) => {
      // The plugin holds it, the coordinator is uncertain: reclaimable, and asked again.
      assert.equal(pluginRows(dbPath(plugin)).get('k-after'), 0)
      assert.deepEqual(await descriptionEpochs(kip.service, 'k-after'), { stored: -2, failed: -1 })
      await rePush(kip, 'k-after', opened)
    },
  )
})

test('kill -9 inside DeleteGroups, after the plugin delete and before finalize and tombstone', {
  timeout: 90_000,
}, async () => {
  await crashAndRestart(
    'DeleteGroups',
    async (proc, plugin, opened) => {
      const m = await joined(proc.port, 'k-delete', opened)
      assert.equal((await push(m.client, 'k-delete', m.memberId, 0)).errorCode, 0)
      assert.equal((await m.leave()).errorCode, 0)
      assert.equal(pluginRows(dbPath(plugin)).get('k-delete'), 0)
      plugin.control({ delete: { 'k-delete': { action: 'crash-after' } } })
      const admin = await WireClient.connect(proc.port)
      opened.push(admin)
      await deleteGroups(admin, ['k-delete']).catch(() => undefined)
    },
    async (kip, plugin, opened) => {
      assert.deepEqual(await descriptionEpochs(kip.service, 'k-delete'), { stored: -2, failed: -1 })
      assert.equal(pluginRows(dbPath(plugin)).has('k-delete'), false)
      const admin = await WireClient.connect(kip.port)
      opened.push(admin)
      assert.equal((await deleteGroups(admin, ['k-delete']))[0].errorCode, 0)
      assert.equal(await descriptionEpochs(kip.service, 'k-delete'), undefined)
    },
  )
})

test('kill -9 inside the cleanup cycle, after the plugin delete and before finalize', {
  timeout: 90_000,
}, async () => {
  await crashAndRestart(
    'cleanup cycle',
    async (proc, plugin, opened) => {
      plugin.control({ delete: { 'k-cleanup': { action: 'crash-after' } } })
      const m = await joined(proc.port, 'k-cleanup', opened)
      assert.equal((await push(m.client, 'k-cleanup', m.memberId, 0)).errorCode, 0)
      // The empty group becomes eligible; the next cycle deletes and the process dies.
      assert.equal((await m.leave()).errorCode, 0)
    },
    async (kip) => {
      await waitFor(
        'cleanup and expiry',
        async () => (await descriptionEpochs(kip.service, 'k-cleanup')) === undefined,
      )
    },
    { 'offsets.retention.check.interval.ms': '300' },
  )
})
