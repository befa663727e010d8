// The network client and admin against the real Topograph server (ApiVersions, Metadata,
// FindCoordinator, CreateTopics).
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Admin } from '../../../src/clients/admin/index.js'
import { Connection, NetworkClient } from '../../../src/clients/network/index.js'
import { startTestServer, type TestServer } from '../../server/harness.js'

let ts: TestServer
before(async () => {
  ts = await startTestServer()
})
after(async () => {
  await ts.stop()
})

describe('network client against the Topograph server', () => {
  it('negotiates ApiVersions and offers the streams APIs', async () => {
    const c = await Connection.open({ host: '127.0.0.1', port: ts.port })
    try {
      assert.ok(c.apiVersionRange(18) !== undefined)
      assert.equal(c.negotiateVersion(18), 5)
      assert.ok(c.negotiateVersion(3) >= 9)
    } finally {
      c.close()
    }
  })

  it('reads metadata and finds the group coordinator', async () => {
    const client = new NetworkClient({ bootstrapServers: `127.0.0.1:${ts.port}` })
    try {
      const md = await client.metadata()
      assert.equal(md.brokers.length, 1)
      assert.equal(md.brokers[0]!.port, ts.port)
      const node = await client.findCoordinator('some-group')
      assert.equal(node.port, ts.port)
    } finally {
      await client.close()
    }
  })

  it('creates and lists topics through the admin client', async () => {
    const admin = Admin.create({ bootstrapServers: `127.0.0.1:${ts.port}` })
    try {
      await admin.createTopics([{ name: 'client-test-topic', numPartitions: 2, replicationFactor: 1 }]).all()
      assert.ok((await admin.listTopics()).includes('client-test-topic'))
      await assert.rejects(
        admin.createTopics([{ name: 'client-test-topic', numPartitions: 1 }]).get('client-test-topic'),
        (e: unknown) => {
          return e instanceof Error && /already exists/.test(e.message)
        },
      )
    } finally {
      await admin.close()
    }
  })
})
