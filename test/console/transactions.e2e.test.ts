// The console's transactions view over the admin-backed source and a real server: an open
// transaction is listed with its state, producer, partitions and its age at the console's clock
// (the start time the coordinator reports), over HTTP too; a completed one is not listed; a source
// without transactions answers 501.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Admin } from '../../src/clients/admin/index.js'
import type { TransactionsResponse } from '../../src/console/api-types.js'
import { ConsoleApi, ConsoleApiError } from '../../src/console/api.js'
import { startConsole } from '../../src/console/index.js'
import { adminConsoleSource } from '../../src/console/source.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import type * as p from '../../src/protocol/index.js'
import { createTopics } from '../helpers/data-plane.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

let ts: TestServer
let c: WireClient
let admin: Admin
before(async () => {
  ts = await startTestServer()
  c = await WireClient.connect(ts.port)
  assert.deepEqual(await createTopics(c, [{ name: 'con-tx', partitions: 2 }]), [0])
  admin = Admin.create({ bootstrapServers: `127.0.0.1:${ts.port}`, defaultApiTimeoutMs: 10_000 })
})
after(async () => {
  await admin?.close()
  c?.close()
  await ts?.stop()
})

async function open(transactionalId: string): Promise<{ producerId: bigint; producerEpoch: number }> {
  const init = await c.request<p.InitProducerIdResponse>(22, 5, {
    transactionalId,
    transactionTimeoutMs: 30000,
    producerId: -1n,
    producerEpoch: -1,
  })
  const pid = { producerId: init.body.producerId, producerEpoch: init.body.producerEpoch }
  const add = await c.request<p.AddPartitionsToTxnResponse>(24, 3, {
    v3AndBelowTransactionalId: transactionalId,
    v3AndBelowProducerId: pid.producerId,
    v3AndBelowProducerEpoch: pid.producerEpoch,
    v3AndBelowTopics: [{ name: 'con-tx', partitions: [1] }],
  })
  assert.equal(add.body.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, ErrorCode.NONE)
  return pid
}

describe('console: open transactions', () => {
  it('lists an open transaction with its age; not one that completed', async () => {
    const pid = await open('con-open')
    const done = await open('con-done')
    const end = await c.request<p.EndTxnResponse>(26, 3, {
      transactionalId: 'con-done',
      ...done,
      committed: true,
    })
    assert.equal(end.body.errorCode, ErrorCode.NONE)
    const [d] = await ts.server.context.transactions.describeTransactions(['con-open'])
    const started = Number(d.transactionStartTimeMs)
    const api = new ConsoleApi(adminConsoleSource(admin), { now: () => new Date(started + 4321) })
    const r = await api.transactions()
    assert.deepEqual(r, {
      transactions: [
        {
          transactionalId: 'con-open',
          state: 'Ongoing',
          producerId: pid.producerId.toString(),
          producerEpoch: pid.producerEpoch,
          transactionTimeoutMs: 30000,
          startedAt: new Date(started).toISOString(),
          ageMs: 4321,
          partitions: [{ topic: 'con-tx', partition: 1 }],
          error: null,
        },
      ],
      fetchedAt: new Date(started + 4321).toISOString(),
    } satisfies TransactionsResponse)
  })

  it('GET /api/transactions', async () => {
    const running = await startConsole({
      bootstrapServers: [`127.0.0.1:${ts.port}`],
      listener: { host: '127.0.0.1', port: 0 },
      metricsRegistry: null,
    })
    try {
      const res = await fetch(`${running.url}/api/transactions`)
      assert.equal(res.status, 200)
      const body = (await res.json()) as TransactionsResponse
      assert.deepEqual(
        body.transactions.map((t) => [t.transactionalId, t.state]),
        [['con-open', 'Ongoing']],
      )
      assert.ok(body.transactions[0].ageMs !== null && body.transactions[0].ageMs >= 0)
    } finally {
      await running.close()
    }
  })

  it('a source without transactions answers 501', async () => {
    const api = new ConsoleApi({
      listStreamsGroups: async () => [],
      describeStreamsGroups: async () => new Map(),
      close: async () => undefined,
    })
    await assert.rejects(api.transactions(), (e: unknown) => e instanceof ConsoleApiError && e.status === 501)
  })
})
