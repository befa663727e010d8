// Kafka's group coordinator gauges and sensors for streams and classic groups and for offsets, on
// /metrics over HTTP from a real `topograph start` process, driven over TCP: `streams-group-count`
// and `classic-group-count` by state, `offset-count`, and the counters `streams-group-rebalance`,
// `group-completed-rebalance`, `offset-commit` and `offset-deletion`.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { createTopics } from '../helpers/data-plane.js'
import { type MetricsServer, startMetricsServer } from '../helpers/prometheus.js'
import { simpleTopology, StreamsMember } from '../helpers/streams-member.js'
import { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: decoded bodies are checked field by field
type AnyBody = any

const PREFIX = 'kafka_server_group_coordinator_metrics_'

test('/metrics serves the streams and classic group counts, the offset count and their sensors', {
  timeout: 90_000,
}, async () => {
  let m: MetricsServer | undefined
  const clients: WireClient[] = []
  try {
    m = await startMetricsServer({
      'group.initial.rebalance.delay.ms': '0',
      'group.streams.initial.rebalance.delay.ms': '0',
    })
    const server = m.server
    const metrics = m
    const scrape = () => metrics.scrape(PREFIX)

    // Before any group: every state of every gauge is there, at zero, and so is each counter.
    const empty = await scrape()
    for (const state of ['Empty', 'NotReady', 'Assigning', 'Reconciling', 'Stable', 'Dead']) {
      assert.equal(empty.at(`streams_group_count{state="${state}"}`), 0, state)
    }
    for (const state of ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead']) {
      assert.equal(empty.at(`classic_group_count{state="${state}"}`), 0, state)
    }
    assert.equal(empty.at('offset_count'), 0)
    for (const sensor of [
      'streams_group_rebalance',
      'group_completed_rebalance',
      'offset_commit',
      'offset_expiration',
      'offset_deletion',
    ]) {
      assert.match(empty.text, new RegExp(`# TYPE ${PREFIX}${sensor}_count counter`))
    }
    const before = (name: string) => empty.samples.get(`${PREFIX}${name}_count`) ?? 0

    const admin = await WireClient.connect(server.port)
    clients.push(admin)
    assert.deepEqual(await createTopics(admin, [{ name: 'words', partitions: 3 }]), [0])

    // Streams: "app" joins (one group epoch bump) and leaves nothing behind; "waiting" reads a
    // topic that does not exist, so it is NotReady.
    const app = await StreamsMember.connect(server.port, {
      groupId: 'app',
      memberId: 'app-member',
      processId: 'p1',
      topology: simpleTopology(['words']),
    })
    clients.push(app.client)
    assert.equal((await app.heartbeat()).errorCode, 0)
    const waiting = await StreamsMember.connect(server.port, {
      groupId: 'waiting',
      memberId: 'waiting-member',
      processId: 'p2',
      topology: simpleTopology(['missing-topic']),
    })
    clients.push(waiting.client)
    assert.equal((await waiting.heartbeat()).errorCode, 0)

    // Classic: one member joins and its SyncGroup stores the assignment (a completed rebalance).
    const classic = await WireClient.connect(server.port)
    clients.push(classic)
    const join = async (memberId: string) =>
      (
        await classic.request<AnyBody>(11, 9, {
          groupId: 'legacy',
          sessionTimeoutMs: 30_000,
          rebalanceTimeoutMs: 30_000,
          memberId,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: new Uint8Array([0, 1]) }],
          reason: null,
        })
      ).body
    const first = await join('')
    assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
    const joined = await join(first.memberId)
    assert.equal(joined.errorCode, 0)
    const synced = await classic.request<AnyBody>(14, 5, {
      groupId: 'legacy',
      generationId: joined.generationId,
      memberId: joined.memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: [{ memberId: joined.memberId, assignment: new Uint8Array([0, 2]) }],
    })
    assert.equal(synced.body.errorCode, 0)

    // Offsets: three committed by a group without members, then one of them deleted.
    const committed = await admin.request<AnyBody>(8, 9, {
      groupId: 'offsets-only',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: 'words',
          partitions: [0, 1, 2].map((partitionIndex) => ({
            partitionIndex,
            committedOffset: 5n,
            committedLeaderEpoch: -1,
            committedMetadata: null,
          })),
        },
      ],
    })
    assert.deepEqual(
      committed.body.topics[0].partitions.map((p: AnyBody) => p.errorCode),
      [0, 0, 0],
    )
    const deleted = await admin.request<AnyBody>(47, 0, {
      groupId: 'offsets-only',
      topics: [{ name: 'words', partitions: [{ partitionIndex: 1 }] }],
    })
    assert.equal(deleted.body.errorCode, 0)
    assert.equal(deleted.body.topics[0].partitions[0].errorCode, 0)

    const after = await scrape()
    assert.equal(after.at('group_count{protocol="streams"}'), 2)
    assert.equal(after.at('streams_group_count{state="NotReady"}'), 1)
    assert.equal(
      after.at('streams_group_count{state="Assigning"}') +
        after.at('streams_group_count{state="Reconciling"}') +
        after.at('streams_group_count{state="Stable"}'),
      1,
    )
    assert.equal(after.at('classic_group_count{state="Stable"}'), 1)
    assert.equal(after.at('classic_group_count{state="Empty"}'), 1, 'offsets-only')
    assert.equal(after.at('offset_count'), 2)
    assert.equal(after.at('streams_group_rebalance_count') - before('streams_group_rebalance'), 2)
    assert.equal(after.at('group_completed_rebalance_count') - before('group_completed_rebalance'), 1)
    assert.equal(after.at('offset_commit_count') - before('offset_commit'), 3)
    assert.equal(after.at('offset_deletion_count') - before('offset_deletion'), 1)
  } finally {
    for (const c of clients) c.close()
    await m?.stop()
  }
})
