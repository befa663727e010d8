// Crash safety of the classic JoinGroup conversion (KIP-1331 §7, #22777): a real `topograph start`
// process (sqlite coordinator storage, the controllable plugin over its sqlite backend) is killed with
// SIGKILL at each step of the conversion of an empty streams group that holds a stored description:
// after the -2 barrier (before the plugin delete), after the plugin delete (before the tombstone), and
// after a failed delete armed the conversion throttle (before any tombstone). After a restart on the
// same data the leak/loss checker passes, and a classic join (or the cleanup cycle) converges.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { descriptionEpochs, type KipServer, type PluginFiles } from '../helpers/kip1331.js'
import { classicJoin, streamsGroupWithStoredDescription } from '../helpers/kip1331-conversion.js'
import { crashAndRestart, pluginRows } from '../helpers/kip1331-invariants.js'
import { WireClient } from '../server/wire-client.js'

const NO_CYCLE = { 'offsets.retention.check.interval.ms': '3600000' }

const dbPath = (plugin: PluginFiles) => plugin.configs['topology.description.sqlite.path']

async function connect(port: number, opened: { close(): void }[]): Promise<WireClient> {
  const c = await WireClient.connect(port)
  opened.push(c)
  return c
}

/** After the restart a classic join converts the group: plugin delete (idempotent), then classic. */
async function convertAfterRestart(
  kip: KipServer,
  plugin: PluginFiles,
  groupId: string,
  opened: { close(): void }[],
) {
  const c = await connect(kip.port, opened)
  // The conversion throttle is in memory only: a restart starts without it.
  assert.equal(kip.service.topologyDescriptions.isConversionDeleteThrottled(groupId), false)
  const r = await classicJoin(c, groupId, '')
  assert.equal(r.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
  assert.equal(await descriptionEpochs(kip.service, groupId), undefined)
  assert.equal(pluginRows(dbPath(plugin)).has(groupId), false)
  assert.equal(
    plugin.calls().filter((x) => x.op === 'delete' && x.groupId === groupId && x.result === 'ok').length,
    1,
  )
}

test('kill -9 after the barrier, before the plugin delete', { timeout: 90_000 }, async () => {
  await crashAndRestart(
    'after the barrier',
    async (proc, plugin, opened) => {
      await streamsGroupWithStoredDescription(proc.port, 'cc-barrier', opened)
      assert.equal(pluginRows(dbPath(plugin)).get('cc-barrier'), 0)
      plugin.control({ delete: { 'cc-barrier': { action: 'crash-before' } } })
      await classicJoin(await connect(proc.port, opened), 'cc-barrier', '').catch(() => undefined)
    },
    async (kip, plugin, opened) => {
      // The barrier is durable and the plugin untouched: uncertain, so reclaimable.
      assert.deepEqual(await descriptionEpochs(kip.service, 'cc-barrier'), { stored: -2, failed: -1 })
      assert.equal(pluginRows(dbPath(plugin)).get('cc-barrier'), 0)
      await convertAfterRestart(kip, plugin, 'cc-barrier', opened)
    },
    NO_CYCLE,
  )
})

test('kill -9 after the plugin delete, before the tombstone', { timeout: 90_000 }, async () => {
  await crashAndRestart(
    'after the plugin delete',
    async (proc, plugin, opened) => {
      await streamsGroupWithStoredDescription(proc.port, 'cc-deleted', opened)
      plugin.control({ delete: { 'cc-deleted': { action: 'crash-after' } } })
      await classicJoin(await connect(proc.port, opened), 'cc-deleted', '').catch(() => undefined)
    },
    async (kip, plugin, opened) => {
      // The plugin row is gone, the group is still a streams group at -2 (no loss: -2 is not a claim).
      assert.deepEqual(await descriptionEpochs(kip.service, 'cc-deleted'), { stored: -2, failed: -1 })
      assert.equal(pluginRows(dbPath(plugin)).has('cc-deleted'), false)
      await convertAfterRestart(kip, plugin, 'cc-deleted', opened)
    },
    NO_CYCLE,
  )
})

test('kill -9 after a failed delete armed the throttle, before any tombstone; the cleanup cycle reclaims', {
  timeout: 90_000,
}, async () => {
  await crashAndRestart(
    'after a failed delete',
    async (proc, plugin, opened) => {
      await streamsGroupWithStoredDescription(proc.port, 'cc-failed', opened)
      plugin.control({ delete: { 'cc-failed': { action: 'transient' } } })
      const c = await connect(proc.port, opened)
      const r = await classicJoin(c, 'cc-failed', 'm-1')
      assert.deepEqual([r.errorCode, r.memberId], [ErrorCode.REBALANCE_IN_PROGRESS, 'm-1'])
      // Throttled: refused again without a second plugin call.
      assert.equal((await classicJoin(c, 'cc-failed', 'm-1')).errorCode, ErrorCode.REBALANCE_IN_PROGRESS)
      assert.equal(plugin.calls().filter((x) => x.op === 'delete').length, 1)
      await proc.kill()
    },
    async (kip, plugin) => {
      assert.deepEqual(await descriptionEpochs(kip.service, 'cc-failed'), { stored: -2, failed: -1 })
      assert.equal(pluginRows(dbPath(plugin)).get('cc-failed'), 0)
      // No classic client comes back: the cleanup cycle reclaims the description and finalizes to -1.
      await kip.service.topologyDescriptions.runCleanupCycle()
      assert.equal(pluginRows(dbPath(plugin)).has('cc-failed'), false)
      assert.deepEqual(await descriptionEpochs(kip.service, 'cc-failed'), { stored: -1, failed: -1 })
    },
    NO_CYCLE,
  )
})
