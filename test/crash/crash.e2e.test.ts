// The crash-point campaign's mechanism (npm run crash): two seeded runs of every operation, each a
// real `topograph start` process killed with SIGKILL and checked after a restart; and the checker
// itself, shown to find a lost description, a lost, a duplicated or an unsent record, and a half
// visible transaction on a server where they were made on purpose.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { createTopics, makeBatch, produce } from '../helpers/data-plane.js'
import { streamsGroupWithStoredDescription } from '../helpers/kip1331-conversion.js'
import { startTestServer, tempDataDir } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'
import { checkCoordinator, checkData } from './checker.js'
import { Observations, partitionKey } from './model.js'
import { OPERATIONS } from './ops.js'
import { BASE_SETTINGS, runOne } from './run.js'

const SEED = 20261202
const RUNS = Number(process.env.CRASH_RUNS ?? 2)

describe('kill -9 at seeded moments of each operation, then the one checker', () => {
  for (const op of OPERATIONS) {
    test(`${op.name}: ${RUNS} runs`, { timeout: 600_000 }, async () => {
      for (let run = 0; run < RUNS; run++) {
        const r = await runOne(op, run, SEED)
        assert.deepEqual(
          r.violations,
          [],
          `${op.name} run ${run} (kill ${r.trigger}); reproduce: npm run crash -- --ops ${op.name} --seed ${SEED} --only ${run}`,
        )
        assert.ok(r.acksAtKill >= 0, 'the process was killed by the run')
      }
    })
  }
})

test('the checker finds a lost description, lost, duplicated and unsent records, a half-visible transaction', {
  timeout: 120_000,
}, async () => {
  const dataDir = tempDataDir()
  const pluginDb = join(dataDir, 'topology-descriptions.db')
  const server = await startTestServer(
    { ...BASE_SETTINGS, 'topology.description.sqlite.path': pluginDb },
    {},
    dataDir,
  )
  const opened: { close(): void }[] = []
  try {
    const obs = new Observations()
    // A group whose push was acknowledged; then its description disappears from the plugin.
    await streamsGroupWithStoredDescription(server.port, 'lost', opened)
    const g = obs.group('lost')
    g.ackedStored = 0
    let found: string[] = []
    await checkCoordinator(server, pluginDb, obs, found)
    assert.equal(found.length, 0, found.join('\n'))
    const db = new Database(pluginDb)
    db.prepare('DELETE FROM topology_descriptions WHERE group_id = ?').run('lost')
    db.close()
    await checkCoordinator(server, pluginDb, obs, found)
    assert.ok(
      found.some((x) => x.includes('lost: KIP-1331 loss of an acknowledged push')),
      found.join('\n'),
    )
    assert.ok(
      found.some((x) => x.startsWith('KIP-1331 loss: lost@0')),
      found.join('\n'),
    )

    // Records: two acknowledged, one written twice, one never sent.
    const c = await WireClient.connect(server.port)
    opened.push(c)
    assert.deepEqual(await createTopics(c, [{ name: 'd', partitions: 1 }]), [0])
    const o = obs.partition('d', 0, 'log')
    const send = async (values: string[]) => {
      const [a] = await produce(c, [
        {
          topic: 'd',
          partition: 0,
          records: makeBatch(values.map((value) => ({ key: null, value, timestamp: Date.now() }))),
        },
      ])
      assert.equal(a.errorCode, 0)
      return Number(a.baseOffset)
    }
    o.acked.set('d.0-0', await send(['d.0-0']))
    o.acked.set('d.0-1', await send(['d.0-1']))
    found = []
    await checkData(server, obs, found, { transactions: false })
    assert.equal(found.length, 0, found.join('\n'))
    o.acked.set('d.0-2', 7)
    await send(['d.0-1', 'd.0-9'])
    await checkData(server, obs, found, { transactions: false })
    assert.ok(
      found.some((x) => x.includes('acknowledged d.0-2 (offset 7) is missing')),
      found.join('\n'),
    )
    assert.ok(
      found.some((x) => x.includes('d.0-1 is there twice')),
      found.join('\n'),
    )
    assert.ok(
      found.some((x) => x.includes('d.0-9 at offset 3 was never sent')),
      found.join('\n'),
    )

    // A "committed" transaction of which only one record is visible.
    const t = obs.partition('t', 0, 'txn')
    assert.deepEqual(await createTopics(c, [{ name: 't', partitions: 1 }]), [0])
    await produce(c, [
      { topic: 't', partition: 0, records: makeBatch([{ key: null, value: 'x-0', timestamp: Date.now() }]) },
    ])
    t.inflight.add('x-0')
    obs.txns.push({
      transactionalId: 'x',
      values: new Map([[partitionKey('t', 0), ['x-0', 'x-1']]]),
      outcome: 'committed',
    })
    found = []
    await checkData(server, obs, found, { transactions: true })
    assert.ok(
      found.some((x) => x.includes('committed but read_committed sees 1 of its 2 records')),
      found.join('\n'),
    )
    obs.txns[0].outcome = 'unknown'
    found = []
    await checkData(server, obs, found, { transactions: true })
    assert.ok(
      found.some((x) => x.includes('half visible')),
      found.join('\n'),
    )
  } finally {
    for (const x of opened) x.close()
    await server.stop(true)
    rmSync(dataDir, { recursive: true, force: true })
  }
})
