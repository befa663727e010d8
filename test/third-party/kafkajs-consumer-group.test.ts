// KafkaJS consumers form a classic group against the server: both see GROUP_JOIN with the same
// leader and disjoint assignments covering every partition (JoinGroup, SyncGroup, the leader's
// assignment). Fetching is not served, so the test stops at the group and disconnects.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { type Consumer, type ConsumerGroupJoinEvent, Kafka, logLevel } from 'kafkajs'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: test access to decoded bodies
type AnyBody = any

let ts: TestServer
before(async () => {
  ts = await startTestServer({ 'group.initial.rebalance.delay.ms': '500' })
})
after(async () => {
  await ts.stop()
})

test('two KafkaJS consumers form a group and split the partitions', { timeout: 60_000 }, async () => {
  const admin = await WireClient.connect(ts.port)
  const consumers: Consumer[] = []
  try {
    const created = await admin.request<AnyBody>(19, 7, {
      topics: [{ name: 'kjs-orders', numPartitions: 4, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 1000,
    })
    assert.equal(created.body.topics[0].errorCode, 0)
    const joins = new Map<string, ConsumerGroupJoinEvent['payload']>()
    for (const name of ['one', 'two']) {
      const kafka = new Kafka({
        clientId: `kjs-${name}`,
        brokers: [`127.0.0.1:${ts.port}`],
        logLevel: logLevel.NOTHING,
        retry: { retries: 0 },
      })
      const consumer = kafka.consumer({
        groupId: 'kjs-group',
        sessionTimeout: 10_000,
        rebalanceTimeout: 10_000,
        heartbeatInterval: 500,
        retry: { retries: 0, restartOnFailure: async () => false },
      })
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        joins.set(name, e.payload)
      })
      consumers.push(consumer)
      await consumer.connect()
      await consumer.subscribe({ topic: 'kjs-orders', fromBeginning: true })
    }
    // run() returns once the consumer is running; the join happens in the background.
    await Promise.all(consumers.map((c) => c.run({ eachMessage: async () => {} })))

    const deadline = Date.now() + 30_000
    const settled = () => {
      const [a, b] = [joins.get('one'), joins.get('two')]
      if (a === undefined || b === undefined) return false
      const owned = [a, b].flatMap((p) => p.memberAssignment['kjs-orders'] ?? [])
      return a.leaderId === b.leaderId && a.memberId !== b.memberId && owned.length === 4
    }
    while (!settled() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    assert.ok(settled(), `no common generation: ${JSON.stringify([...joins])}`)
    const [a, b] = [joins.get('one')!, joins.get('two')!]
    assert.equal(a.groupId, 'kjs-group')
    assert.equal(a.groupProtocol, 'RoundRobinAssigner')
    assert.deepEqual([a.isLeader, b.isLeader].sort(), [false, true], 'exactly one consumer leads')
    assert.ok([a.memberId, b.memberId].includes(a.leaderId))
    assert.match(a.memberId, /^kjs-one-[0-9a-f-]{36}$/)
    const owned = [...a.memberAssignment['kjs-orders'], ...b.memberAssignment['kjs-orders']].sort()
    assert.deepEqual(owned, [0, 1, 2, 3])
    assert.equal(a.memberAssignment['kjs-orders'].length, 2)
  } finally {
    await Promise.allSettled(consumers.map((c) => c.disconnect()))
    admin.close()
  }
})
