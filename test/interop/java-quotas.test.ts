// Kafka's Java Admin client sets, removes and reads client quotas on a real Topograph process
// (Admin.alterClientQuotas / describeClientQuotas: the requests kafka-configs --entity-type
// users/clients --alter --add-config / --delete-config and --describe send), and Kafka's validation
// error reaches it as Kafka's exception.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { closeInterop, InteropServer, JavaClients, kafkaJavaSkip } from '../helpers/interop.js'

interface Described {
  entity: Record<string, string | null>
  quotas: Record<string, number>
}

function byEntity(all: Described[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {}
  for (const d of all) {
    const key = Object.entries(d.entity)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([t, n]) => `${t}=${n ?? '<default>'}`)
      .join(',')
    out[key] = d.quotas
  }
  return out
}

describe('client quotas through the Java Admin client', () => {
  let server: InteropServer
  let java: JavaClients
  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start()
    java = await JavaClients.start(server.bootstrap)
  })
  after(() => closeInterop(java, server))

  test('alterClientQuotas and describeClientQuotas on users, clients, defaults', {
    skip: kafkaJavaSkip,
    timeout: 300_000,
  }, async () => {
    await java.call({
      op: 'alterClientQuotas',
      entries: [
        { entity: { user: 'alice' }, ops: { producer_byte_rate: 1048576, consumer_byte_rate: 2097152 } },
        { entity: { user: 'alice', 'client-id': 'app' }, ops: { request_percentage: 25 } },
        { entity: { 'client-id': null }, ops: { producer_byte_rate: 50000 } },
      ],
    })
    assert.deepEqual(byEntity(await java.call<Described[]>({ op: 'describeClientQuotas' })), {
      'user=alice': { producer_byte_rate: 1048576, consumer_byte_rate: 2097152 },
      'client-id=app,user=alice': { request_percentage: 25 },
      'client-id=<default>': { producer_byte_rate: 50000 },
    })
    await java.call({
      op: 'alterClientQuotas',
      entries: [{ entity: { user: 'alice' }, ops: { consumer_byte_rate: null } }],
    })
    const after = byEntity(await java.call<Described[]>({ op: 'describeClientQuotas' }))
    assert.deepEqual(after['user=alice'], { producer_byte_rate: 1048576 })
    // Kafka's validation reaches the Java client as an InvalidRequestException.
    await assert.rejects(
      java.call({
        op: 'alterClientQuotas',
        entries: [{ entity: { user: 'bob' }, ops: { producer_byte_rate: -1 } }],
      }),
      /Quota producer_byte_rate must be greater than 0/,
    )
  })
})
