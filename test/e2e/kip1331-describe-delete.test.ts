// KIP-1331 test plan §5 (describe statuses, D2 data loss), §2 (DeleteGroups, D1, v2 downgrade) and
// §8.21 (periodic cleanup after retention, D3), plus the Prometheus sensors, against a real server
// with the controllable test plugin.
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, test } from 'node:test'
import { register } from 'prom-client'
import { createLogger } from '../../src/server/logger.js'
import { prometheusName } from '../../src/server/metrics.js'
import {
  deleteGroups,
  descriptionEpochs,
  describeTopology,
  joinMember,
  type KipServer,
  push,
  startKipServer,
  waitFor,
} from '../helpers/kip1331.js'
import type { StreamsMember } from '../helpers/streams-member.js'
import { WireClient } from '../server/wire-client.js'

const logLines: { level: string; msg: string }[] = []
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n')) if (line !== '') logLines.push(JSON.parse(line))
    done()
  },
})

let kip: KipServer
let admin: WireClient
const open: { close(): void }[] = []

before(async () => {
  kip = await startKipServer({
    overrides: {
      'topograph.internal.test.topology.description.backoff.initial.ms': '300',
      'topograph.internal.test.topology.description.backoff.max.ms': '600',
      'offsets.retention.check.interval.ms': '250',
    },
    server: { logger: createLogger({ level: 'info', destination: sink }) },
  })
  admin = await WireClient.connect(kip.port)
  open.push(admin)
})

after(async () => {
  for (const c of open) c.close()
  await kip?.stop()
})

async function stored(groupId: string, leave = false, on: KipServer = kip): Promise<StreamsMember> {
  const m = await joinMember(on.port, groupId)
  open.push(m)
  assert.equal((await m.heartbeat()).topologyDescriptionRequired, true)
  assert.equal((await push(m.client, groupId, m.memberId, 0)).errorCode, 0)
  if (leave) assert.equal((await m.leave()).errorCode, 0)
  return m
}

const calls = (op: string, groupId: string, on: KipServer = kip) =>
  on.plugin!.calls().filter((c) => c.op === op && c.groupId === groupId)

test('11. statuses: AVAILABLE, NOT_STORED (none / other epoch), ERROR, NOT_REQUESTED; ErrorCode stays NONE', async () => {
  await stored('d-avail')
  const none = await joinMember(kip.port, 'd-none')
  open.push(none)
  await none.heartbeat()
  await stored('d-error')
  kip.plugin!.control({ get: { 'd-error': { action: 'transient', message: 'read failed' } } })
  try {
    const rows = await describeTopology(admin, ['d-avail', 'd-none', 'd-error', 'd-missing'])
    const byId = new Map(rows.map((r) => [r.groupId, r]))
    assert.deepEqual(
      ['d-avail', 'd-none', 'd-error', 'd-missing'].map((g) => [
        byId.get(g)?.errorCode,
        byId.get(g)?.topologyDescriptionStatus,
        byId.get(g)?.topologyDescription !== null,
      ]),
      [
        [0, 3, true],
        [0, 1, false],
        [0, 2, false],
        [69, 0, false],
      ],
    )
    assert.deepEqual(byId.get('d-avail')?.topologyDescription?.globalStores[0].processor.stores, [
      'global-store',
    ])
    assert.equal(calls('get', 'd-none').length, 0)
    const plain = await describeTopology(admin, ['d-avail'], false)
    assert.deepEqual([plain[0].topologyDescriptionStatus, plain[0].topologyDescription], [0, null])
    assert.ok(
      logLines.some((l) => l.msg === 'Topology description plugin getTopology failed for group d-error.'),
    )
  } finally {
    kip.plugin!.control({})
  }
  // Another epoch: after an upgrade the stored epoch 0 no longer matches, so no plugin read.
  const up = await joinMember(kip.port, 'd-avail', 'd-avail-up', { topologyEpoch: 1 })
  open.push(up)
  await up.heartbeat()
  const before = calls('get', 'd-avail').length
  const [row] = await describeTopology(admin, ['d-avail'])
  assert.deepEqual([row.errorCode, row.topologyDescriptionStatus], [0, 1])
  assert.equal(calls('get', 'd-avail').length, before)
})

test('12. D2: getTopology null for the stored epoch → NOT_STORED, WARN, stored := -2, re-solicited', async () => {
  const m = await stored('d-lost')
  kip.plugin!.control({ get: { 'd-lost': { action: 'null' } } })
  try {
    const [row] = await describeTopology(admin, ['d-lost'])
    assert.deepEqual([row.errorCode, row.topologyDescriptionStatus], [0, 1])
  } finally {
    kip.plugin!.control({})
  }
  assert.deepEqual(await descriptionEpochs(kip.service, 'd-lost'), { stored: -2, failed: -1 })
  assert.ok(
    logLines.some(
      (l) =>
        l.level === 'warn' &&
        l.msg.startsWith('[GroupId d-lost] Topology description plugin has no description'),
    ),
  )
  await waitFor(
    're-solicitation',
    async () => (await m.heartbeat()).topologyDescriptionRequired === true,
    3000,
  )
  assert.equal((await push(m.client, 'd-lost', m.memberId, 0)).errorCode, 0)
  assert.equal((await describeTopology(admin, ['d-lost']))[0].topologyDescriptionStatus, 3)
})

test('7/8. DeleteGroups: plugin delete first; a failure gives 134 with the plugin message (D1), others unaffected, retry converges', async () => {
  // Its own server, without the periodic cleanup cycle that the shared one runs every 250 ms: that
  // cycle deletes an empty group with a stored description by itself, so between a leave and the
  // DeleteGroups below it could take x-ok, x-fail or x-fallback away first (GROUP_ID_NOT_FOUND).
  const own = await startKipServer()
  const ownAdmin = await WireClient.connect(own.port)
  try {
    await stored('x-ok', true, own)
    await stored('x-fail', true, own)
    await stored('x-fallback', true, own)
    await stored('x-busy', false, own)
    own.plugin!.control({
      delete: {
        'x-fail': { action: 'permanent', message: 'store offline' },
        'x-fallback': { action: 'reject-empty' },
      },
    })
    try {
      const results = await deleteGroups(ownAdmin, ['x-ok', 'x-fail', 'x-fallback', 'x-busy', 'x-missing'])
      assert.deepEqual(
        results.map((r) => [r.groupId, r.errorCode, r.errorMessage]),
        [
          ['x-ok', 0, null],
          ['x-fail', 134, 'store offline'],
          ['x-fallback', 134, 'Topology description plugin failed to delete the topology.'],
          ['x-busy', 68, null],
          ['x-missing', 69, null],
        ],
      )
      // The non-empty group was dropped by the barrier and never reached the plugin.
      assert.equal(calls('delete', 'x-busy', own).length, 0)
      assert.equal(calls('delete', 'x-ok', own).length, 1)
      // The failed group still exists, left uncertain (still reclaimable, still soliciting).
      const [row] = await describeTopology(ownAdmin, ['x-fail'])
      assert.equal(row.errorCode, 0)
      assert.deepEqual(await descriptionEpochs(own.service, 'x-fail'), { stored: -2, failed: -1 })
      // Below v3 Kafka's rewrite: UNKNOWN_SERVER_ERROR, no message.
      const v2 = await deleteGroups(ownAdmin, ['x-fail'], 2)
      assert.deepEqual([v2[0].errorCode], [-1])
    } finally {
      own.plugin!.control({})
    }
    const retry = await deleteGroups(ownAdmin, ['x-fail', 'x-fallback'])
    assert.deepEqual(
      retry.map((r) => r.errorCode),
      [0, 0],
    )
    assert.equal((await describeTopology(ownAdmin, ['x-fail']))[0].errorCode, 69)
    // D3: no back-off entry outlives its group.
    for (const g of ['x-ok', 'x-fail', 'x-fallback'])
      assert.equal(own.service.topologyDescriptions.backoff.entry(g), undefined)
  } finally {
    ownAdmin.close()
    await own.stop()
  }
})

test('21. cleanup cycle: an expired group with a stored description is deleted from the plugin, then tombstoned (D3)', async () => {
  await stored('c-expire', true)
  kip.plugin!.control({ delete: { 'c-stuck': { action: 'transient', message: 'down' } } })
  await stored('c-stuck', true)
  try {
    await waitFor(
      'cleanup of c-expire',
      async () => (await descriptionEpochs(kip.service, 'c-expire')) === undefined,
      5000,
    )
    assert.ok(calls('delete', 'c-expire').length >= 1)
    assert.equal(kip.service.topologyDescriptions.backoff.entry('c-expire'), undefined)
    // While the plugin cannot delete, the group does not expire: it stays at -2.
    await waitFor('failed cleanup attempts', () => calls('delete', 'c-stuck').length >= 2, 5000)
    assert.deepEqual(await descriptionEpochs(kip.service, 'c-stuck'), { stored: -2, failed: -1 })
  } finally {
    kip.plugin!.control({})
  }
  await waitFor(
    'cleanup of c-stuck',
    async () => (await descriptionEpochs(kip.service, 'c-stuck')) === undefined,
    5000,
  )
})

test('metrics: the eight sensors are Prometheus counters under Kafka names on the default registry', async () => {
  kip.plugin!.control({ set: { 'm-fail': { action: 'transient' } } })
  try {
    const m = await joinMember(kip.port, 'm-fail')
    open.push(m)
    await m.heartbeat()
    assert.equal((await push(m.client, 'm-fail', m.memberId, 0)).errorCode, 135)
  } finally {
    kip.plugin!.control({})
  }
  const text = await register.metrics()
  for (const [sensor, atLeast] of [
    ['streams-group-topology-description-set-success', 1],
    ['streams-group-topology-description-set-error', 1],
    ['streams-group-topology-description-get-success', 1],
    ['streams-group-topology-description-get-error', 1],
    ['streams-group-topology-description-delete-success', 1],
    ['streams-group-topology-description-delete-error', 1],
    ['streams-group-topology-description-cleanup-cycle', 1],
    ['streams-group-topology-description-cleanup-eligible', 1],
  ] as const) {
    const name = prometheusName(sensor)
    const m = new RegExp(`^${name} (\\d+)`, 'm').exec(text)
    assert.ok(m, `${name} missing`)
    assert.ok(Number(m[1]) >= atLeast, `${name} = ${m[1]}`)
  }
  assert.equal(
    prometheusName('streams-group-topology-description-set-success'),
    'kafka_server_group_coordinator_metrics_streams_group_topology_description_set_success_count',
  )
})

test('without a plugin, empty streams groups expire normally', async () => {
  const bare = await startKipServer({
    plugin: null,
    overrides: { 'offsets.retention.check.interval.ms': '200' },
  })
  const m = await joinMember(bare.port, 'bare-expire')
  try {
    await m.heartbeat()
    await m.leave()
    await waitFor(
      'expiry',
      async () => (await descriptionEpochs(bare.service, 'bare-expire')) === undefined,
      5000,
    )
  } finally {
    m.close()
    await bare.stop()
  }
})
