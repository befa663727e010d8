// Kafka's consumer group metrics on /metrics over HTTP from a real `topograph start` process: two
// consumer groups driven over TCP with ConsumerGroupHeartbeat (one Stable with two members, one Empty
// after its only member left) give `group-count{protocol}`, `consumer-group-count{state}` and
// `consumer-group-rebalance-count` (a group epoch bump per join, none for a leave or a steady
// heartbeat), named as the streams-group metrics are.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConsumerMember } from '../helpers/consumer-member.js'
import { createTopics } from '../helpers/data-plane.js'
import { type MetricsServer, startMetricsServer } from '../helpers/prometheus.js'
import { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: decoded bodies are checked field by field
type AnyBody = any

const PREFIX = 'kafka_server_group_coordinator_metrics_'

test('/metrics serves the consumer group counts by state and the rebalance count', {
  timeout: 90_000,
}, async () => {
  let m: MetricsServer | undefined
  const clients: WireClient[] = []
  try {
    m = await startMetricsServer({ 'group.consumer.assignment.interval.ms': '0' })
    const server = m.server
    const started = server
    const metrics = m
    const scrape = () => metrics.scrape(PREFIX)

    // Before any group: every tagged gauge is there, at zero.
    const empty = await scrape()
    for (const protocol of ['classic', 'consumer', 'streams']) {
      assert.equal(empty.at(`group_count{protocol="${protocol}"}`), 0)
    }
    for (const state of ['Empty', 'Assigning', 'Reconciling', 'Stable', 'Dead']) {
      assert.equal(empty.at(`consumer_group_count{state="${state}"}`), 0)
    }
    assert.match(empty.text, /# TYPE kafka_server_group_coordinator_metrics_consumer_group_count gauge/)
    assert.match(
      empty.text,
      /# TYPE kafka_server_group_coordinator_metrics_consumer_group_rebalance_count counter/,
    )
    const rebalancesBefore = empty.at('consumer_group_rebalance_count')

    const admin = await WireClient.connect(server.port)
    clients.push(admin)
    assert.deepEqual(await createTopics(admin, [{ name: 'orders', partitions: 4 }]), [0])
    const member = async (groupId: string, memberId: string) => {
      const c = await WireClient.connect(started.port)
      clients.push(c)
      return new ConsumerMember(c, groupId, memberId, ['orders'])
    }

    // Group "app": two joins (two rebalances), then steady heartbeats until Stable (no more).
    const a = await member('app', 'member-a')
    const b = await member('app', 'member-b')
    await a.heartbeat()
    await b.heartbeat()
    for (let i = 0; i < 10; i++) {
      await a.heartbeat()
      await b.heartbeat()
    }
    const { body: described } = await admin.request<AnyBody>(69, 1, {
      groupIds: ['app'],
      includeAuthorizedOperations: false,
    })
    assert.equal(described.groups[0].groupState, 'Stable')

    // Group "solo": one join (a rebalance), then a leave (not a rebalance in Kafka's count).
    const solo = await member('solo', 'member-s')
    await solo.heartbeat()
    await solo.leave()

    const after = await scrape()
    assert.equal(after.at('group_count{protocol="consumer"}'), 2)
    assert.equal(after.at('group_count{protocol="classic"}'), 0)
    assert.equal(after.at('group_count{protocol="streams"}'), 0)
    assert.equal(after.at('consumer_group_count{state="Stable"}'), 1)
    assert.equal(after.at('consumer_group_count{state="Empty"}'), 1)
    assert.equal(after.at('consumer_group_count{state="Assigning"}'), 0)
    assert.equal(after.at('consumer_group_count{state="Reconciling"}'), 0)
    assert.equal(after.at('consumer_group_rebalance_count') - rebalancesBefore, 3)
  } finally {
    for (const c of clients) c.close()
    await m?.stop()
  }
})
