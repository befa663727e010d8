// Offsets and group administration with clients no one here wrote: KafkaJS admin (fetchOffsets,
// listGroups, describeGroups, deleteGroups) and kafka-python's admin client
// (list_consumer_groups, list_consumer_group_offsets), next to a streams group.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { Kafka, logLevel } from 'kafkajs'
import { simpleTopology, StreamsMember } from '../helpers/streams-member.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const run = promisify(execFile)
let ts: TestServer
let member: StreamsMember | undefined

before(async () => {
  ts = await startTestServer({
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
  })
})
/**
 * An admin-style commit (generation -1, no member) over the raw protocol. KafkaJS's `setOffsets`
 * cannot be used: it joins a classic consumer group first, and classic groups are not served.
 */
async function commitOffsets(groupId: string, topic: string, offsets: Record<number, bigint>): Promise<void> {
  const c = await WireClient.connect(ts.port)
  try {
    const { body } = await c.request<{ topics: { partitions: { errorCode: number }[] }[] }>(8, 9, {
      groupId,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: topic,
          partitions: Object.entries(offsets).map(([p, o]) => ({
            partitionIndex: Number(p),
            committedOffset: o,
            committedLeaderEpoch: -1,
            committedMetadata: null,
          })),
        },
      ],
    })
    assert.deepEqual(
      body.topics[0].partitions.map((p) => p.errorCode),
      Object.keys(offsets).map(() => 0),
    )
  } finally {
    c.close()
  }
}

after(async () => {
  member?.close()
  await ts.stop()
})

const SCRIPT = `
import json, sys
from kafka.admin import KafkaAdminClient
admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], client_id='kpy', request_timeout_ms=10000)
out = {}
out['groups'] = sorted([list(g) for g in admin.list_consumer_groups()])
offsets = admin.list_consumer_group_offsets('kjs-group')
out['offsets'] = sorted([[tp.topic, tp.partition, om.offset, om.metadata] for tp, om in offsets.items()])
admin.close()
print(json.dumps(out))
`

test('KafkaJS admin: fetch, list, describe and delete groups and offsets', {
  timeout: 30_000,
}, async () => {
  const kafka = new Kafka({
    clientId: 'kjs',
    brokers: [`127.0.0.1:${ts.port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 1 },
  })
  const admin = kafka.admin()
  await admin.connect()
  try {
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2 }] })
    member = await StreamsMember.connect(ts.port, {
      groupId: 'streams-app',
      memberId: 'm1',
      processId: 'p1',
      topology: simpleTopology(['orders']),
    })
    assert.equal((await member.heartbeat()).errorCode, 0)

    await commitOffsets('kjs-group', 'orders', { 0: 10n, 1: 20n })
    const fetched = await admin.fetchOffsets({ groupId: 'kjs-group', topics: ['orders'] })
    assert.deepEqual(fetched[0].partitions.map((p) => [p.partition, p.offset]).sort(), [
      [0, '10'],
      [1, '20'],
    ])
    const listed = await admin.listGroups()
    assert.deepEqual(listed.groups.map((g) => [g.groupId, g.protocolType]).sort(), [
      ['kjs-group', ''],
      ['streams-app', 'streams'],
    ])
    const described = await admin.describeGroups(['kjs-group', 'streams-app', 'nobody'])
    assert.deepEqual(
      described.groups.map((g) => [g.groupId, g.state, (g as { errorCode?: number }).errorCode]),
      [
        ['kjs-group', 'Empty', 0],
        ['streams-app', 'Dead', 0],
        ['nobody', 'Dead', 0],
      ],
    )
    // kafka-python sees the same groups and offsets.
    const { stdout } = await run('/usr/bin/python3', ['-c', SCRIPT, `127.0.0.1:${ts.port}`], {
      timeout: 20_000,
    })
    const out = JSON.parse(stdout.trim().split('\n').pop() as string)
    assert.deepEqual(out.offsets, [
      ['orders', 0, 10, ''],
      ['orders', 1, 20, ''],
    ])
    assert.ok(
      out.groups.some((g: string[]) => g[0] === 'kjs-group' && g[1] === ''),
      JSON.stringify(out.groups),
    )

    await admin.deleteGroups(['kjs-group'])
    assert.deepEqual(
      (await admin.listGroups()).groups.map((g) => g.groupId),
      ['streams-app'],
    )
    const gone = await admin.fetchOffsets({ groupId: 'kjs-group', topics: ['orders'] })
    assert.deepEqual(
      gone[0].partitions.map((p) => p.offset),
      ['-1', '-1'],
    )
    await assert.rejects(
      admin.deleteGroups(['streams-app']),
      (err: Error & { groups?: { errorCode: number }[] }) => {
        assert.equal(err.groups?.[0]?.errorCode, 68)
        return true
      },
    )
  } finally {
    await admin.disconnect()
  }
})

test('OffsetCommit: refused partitions between accepted ones keep their places, the others commit', async () => {
  const c = await WireClient.connect(ts.port)
  try {
    await c.request(19, 7, {
      topics: [{ name: 'mixed', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 5000,
    })
    const partition = (partitionIndex: number, committedOffset: bigint) => ({
      partitionIndex,
      committedOffset,
      committedLeaderEpoch: -1,
      committedMetadata: `m${partitionIndex}`,
    })
    const { body } = await c.request<{
      topics: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[]
    }>(8, 9, {
      groupId: 'mixed-group',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        // Every partition passes: the coordinator answers the whole topic.
        { name: 'mixed', partitions: [partition(0, 5n), partition(1, 6n)] },
        // The first passes, the second does not exist, the third passes again.
        { name: 'mixed', partitions: [partition(1, 7n), partition(9, 8n), partition(0, 9n)] },
        // None passes.
        { name: 'no-such-topic', partitions: [partition(0, 1n)] },
      ],
    })
    assert.deepEqual(
      body.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])]),
      [
        [
          'mixed',
          [
            [0, 0],
            [1, 0],
          ],
        ],
        [
          'mixed',
          [
            [1, 0],
            [9, 3],
            [0, 0],
          ],
        ],
        ['no-such-topic', [[0, 3]]],
      ],
    )
    const fetched = await c.request<{
      groups: {
        topics: {
          name: string
          partitions: { partitionIndex: number; committedOffset: bigint; metadata: string }[]
        }[]
      }[]
    }>(9, 9, {
      groups: [{ groupId: 'mixed-group', memberId: null, memberEpoch: -1, topics: null }],
      requireStable: false,
    })
    // The later commit of a partition in the same request wins.
    assert.deepEqual(
      fetched.body.groups[0].topics.map((t) => [
        t.name,
        t.partitions.map((p) => [p.partitionIndex, p.committedOffset, p.metadata]),
      ]),
      [
        [
          'mixed',
          [
            [0, 9n, 'm0'],
            [1, 7n, 'm1'],
          ],
        ],
      ],
    )
  } finally {
    c.close()
  }
})
