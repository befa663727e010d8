import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { after, describe, test } from 'node:test'
import { promisify } from 'node:util'
import pg from 'pg'
import { PostgresTopologyDescriptionPlugin } from '../../../src/plugin/builtin/postgres.js'
import { loadTopologyDescriptionPlugin } from '../../../src/plugin/loader.js'
import { isPermanentFailure, isTransientFailure } from '../../../src/plugin/spi.js'
import { runPluginConformance, sampleTopologyDescription } from '../../../src/plugin/tck/index.js'
import { dropTestTable, PG_CTL, PG_URL, requirePostgres, uniqueName } from '../../testkit/postgres.js'

const url = PG_URL
const ctl = PG_CTL
const run = promisify(execFile)

if (!url || !ctl) {
  // The test command always starts a database; without one this file must fail, not pass quietly.
  test('postgres plugin tests need a database', () => {
    requirePostgres({ ctl: true })
  })
} else {
  const table = uniqueName('tck_')
  const configs = {
    'topology.description.postgres.url': url,
    'topology.description.postgres.table': table,
    'topology.description.postgres.pool.size': '3',
    'topology.description.postgres.connect.timeout.ms': '1500',
    'topology.description.postgres.query.timeout.ms': '3000',
    'topology.description.max.bytes': '200000',
  }
  const dbCtl = (action: 'start' | 'stop') => run(ctl, [action])
  after(async () => {
    // Leave the database running for whatever runs next, even if a test failed mid-outage.
    await dbCtl('start').catch(() => undefined)
    await dropTestTable(table)
  })

  runPluginConformance(
    'postgres',
    async () => {
      const p = new PostgresTopologyDescriptionPlugin()
      await p.configure(configs)
      return p
    },
    {
      maxDescriptionBytes: 200_000,
      outage: {
        begin: async () => {
          await dbCtl('stop')
        },
        end: async () => {
          await dbCtl('start')
        },
        maxLatencyMs: 3_000,
        recoveryTimeoutMs: 15_000,
      },
    },
  )

  describe('postgres plugin', () => {
    test('configure creates the table; one row per group holds the current epoch', async () => {
      const p = new PostgresTopologyDescriptionPlugin()
      await p.configure(configs)
      await p.setTopology('rows-a', 1, sampleTopologyDescription())
      await p.setTopology('rows-a', 2, sampleTopologyDescription('2'))
      await p.setTopology('rows-b', 7, sampleTopologyDescription())
      await p.deleteTopology('rows-b')
      await p.close()
      const db = new pg.Client({ connectionString: url })
      await db.connect()
      try {
        const r = await db.query<{ group_id: string; topology_epoch: number; description: string }>(
          `SELECT group_id, topology_epoch, description FROM "${table}" WHERE group_id LIKE 'rows-%'`,
        )
        assert.deepEqual(
          r.rows.map((x) => [x.group_id, x.topology_epoch]),
          [['rows-a', 2]],
        )
        assert.deepEqual(JSON.parse(r.rows[0]!.description), sampleTopologyDescription('2'))
      } finally {
        await db.end()
      }
    })

    test('the built-in alias loads it, configured from the broker configs', async () => {
      const p = await loadTopologyDescriptionPlugin({
        ...configs,
        'group.streams.topology.description.plugin.class': 'postgres',
      })
      assert.ok(p instanceof PostgresTopologyDescriptionPlugin)
      await p.setTopology('alias', 1, sampleTopologyDescription())
      assert.deepEqual(await p.getTopology('alias', 1), sampleTopologyDescription())
      await p.close()
    })

    test('an oversized description is rejected permanently without reaching the database', async () => {
      const p = new PostgresTopologyDescriptionPlugin()
      await p.configure({ ...configs, 'topology.description.max.bytes': '64' })
      const e = await p.setTopology('big', 1, sampleTopologyDescription()).catch((x: unknown) => x)
      assert.ok(isPermanentFailure(e))
      await p.close()
    })

    test('configure against a database that is not there fails fast, naming the URL', async () => {
      const p = new PostgresTopologyDescriptionPlugin()
      const t0 = performance.now()
      await assert.rejects(
        p.configure({
          ...configs,
          'topology.description.postgres.url': 'postgres://nobody:secret@127.0.0.1:1/none',
        }),
        (e: Error) => {
          assert.match(
            e.message,
            /^Cannot prepare the PostgreSQL topology description store at postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:1\/none: /,
          )
          assert.doesNotMatch(e.message, /secret/)
          return true
        },
      )
      assert.ok(performance.now() - t0 < 3_000)
    })

    test('the URL in that message hides a password= parameter too', async () => {
      const p = new PostgresTopologyDescriptionPlugin()
      await assert.rejects(
        p.configure({
          ...configs,
          'topology.description.postgres.url': 'postgres://nobody@127.0.0.1:1/none?password=secret',
        }),
        (e: Error) => {
          assert.match(e.message, /at postgres:\/\/nobody@127\.0\.0\.1:1\/none\?password=\*\*\*: /)
          assert.doesNotMatch(e.message, /secret/)
          return true
        },
      )
    })

    test('a server that accepts connections but never answers gives a transient failure at the connect timeout', async () => {
      const silent = createServer(() => undefined)
      const sockets = new Set<Socket>()
      silent.on('connection', (s) => sockets.add(s))
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r))
      const { port } = silent.address() as AddressInfo
      try {
        const p = new PostgresTopologyDescriptionPlugin()
        // configure() is the first call to reach the server; it must give up at the connect timeout.
        const t0 = performance.now()
        await assert.rejects(
          p.configure({
            ...configs,
            'topology.description.postgres.url': `postgres://x@127.0.0.1:${port}/db`,
          }),
          /Cannot prepare the PostgreSQL topology description store/,
        )
        const took = performance.now() - t0
        assert.ok(took >= 1_000 && took < 3_000, `took ${Math.round(took)} ms with a 1500 ms connect timeout`)
      } finally {
        for (const s of sockets) s.destroy()
        await new Promise((r) => silent.close(r))
      }
    })

    test('a statement blocked in the database gives a transient failure at the query timeout', async () => {
      const p = new PostgresTopologyDescriptionPlugin()
      await p.configure({ ...configs, 'topology.description.postgres.query.timeout.ms': '500' })
      const locker = new pg.Client({ connectionString: url })
      await locker.connect()
      try {
        await locker.query('BEGIN')
        await locker.query(`LOCK TABLE "${table}" IN ACCESS EXCLUSIVE MODE`)
        const t0 = performance.now()
        const e = await p.setTopology('locked', 1, sampleTopologyDescription()).catch((x: unknown) => x)
        const took = performance.now() - t0
        assert.ok(isTransientFailure(e), String(e))
        assert.ok(took < 2_000, `took ${Math.round(took)} ms with a 500 ms query timeout`)
        await locker.query('ROLLBACK')
        await p.setTopology('locked', 1, sampleTopologyDescription())
        assert.deepEqual(await p.getTopology('locked', 1), sampleTopologyDescription())
      } finally {
        await locker.end()
        await p.close()
      }
    })

    test('bad configs are refused with the key named', async () => {
      const p = new PostgresTopologyDescriptionPlugin()
      await assert.rejects(p.configure({}), /Missing configuration topology\.description\.postgres\.url/)
      await assert.rejects(
        p.configure({ ...configs, 'topology.description.postgres.table': 'x; DROP TABLE y' }),
        /Invalid value x; DROP TABLE y for configuration topology\.description\.postgres\.table/,
      )
      await assert.rejects(
        p.configure({ ...configs, 'topology.description.postgres.pool.size': '0' }),
        /topology\.description\.postgres\.pool\.size: must be an integer from 1 to 1000/,
      )
    })

    test('a database stopped under a busy plugin gives transient failures, then it recovers', async () => {
      const p = new PostgresTopologyDescriptionPlugin()
      await p.configure(configs)
      await p.setTopology('busy', 1, sampleTopologyDescription())
      await dbCtl('stop')
      try {
        const t0 = performance.now()
        const results = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) => p.setTopology(`busy-${i}`, 1, sampleTopologyDescription())),
        )
        const took = performance.now() - t0
        for (const r of results) {
          assert.equal(r.status, 'rejected')
          assert.ok(isTransientFailure((r as PromiseRejectedResult).reason))
        }
        // 20 calls over a pool of 3: all of them fail within the connect timeout, none queue forever.
        assert.ok(took < 3_000, `took ${Math.round(took)} ms`)
      } finally {
        await dbCtl('start')
      }
      let recovered = false
      for (let i = 0; i < 50 && !recovered; i++) {
        recovered = await p.getTopology('busy', 1).then(
          (d) => d !== null,
          () => false,
        )
        if (!recovered) await new Promise((r) => setTimeout(r, 200))
      }
      assert.ok(recovered, 'the plugin did not recover after the database came back')
      await p.close()
    })
  })
}
