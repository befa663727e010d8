// The admin client's offset and topic calls against fake brokers: listOffsets routed to each
// partition's leader with Kafka's version rules and per-partition errors, alterStreamsGroupOffsets
// and deleteStreamsGroupOffsets with Kafka's result semantics, describeTopics and deleteTopics.
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { Admin, KafkaError, OffsetSpec, UnsupportedVersionError } from '../../../src/clients/admin/index.js'
import type { ListOffsetsRequest } from '../../../src/protocol/generated/messages/ListOffsetsRequest.js'
import type { OffsetCommitRequest } from '../../../src/protocol/generated/messages/OffsetCommitRequest.js'
import { API_DEFINITIONS } from '../../../src/protocol/generated/registry.js'
import { FakeBroker } from '../fake-broker.js'

const open: Array<{ close(): Promise<void> }> = []
after(async () => {
  for (const o of open) await o.close()
})

function adminOf(b: FakeBroker, timeoutMs = 5_000): Admin {
  const admin = Admin.create({
    bootstrapServers: `127.0.0.1:${b.port}`,
    retryBackoffMs: 5,
    retryBackoffMaxMs: 20,
    defaultApiTimeoutMs: timeoutMs,
  })
  open.push(admin)
  return admin
}

async function broker(): Promise<FakeBroker> {
  const b = await FakeBroker.start()
  open.push(b)
  return b
}

/** Metadata naming both brokers; `leaders` maps topic → leader node id per partition (-1: none). */
function serveMetadata(
  b: FakeBroker,
  nodes: FakeBroker[],
  leaders: Record<string, number[]>,
  errors: Record<string, number> = {},
): void {
  b.on(3, (r) => ({
    brokers: nodes.map((n, i) => ({ nodeId: i + 1, host: '127.0.0.1', port: n.port, rack: null })),
    clusterId: 'fake',
    controllerId: 1,
    topics: (r.request.topics ?? []).map((t) => ({
      ...API_DEFINITIONS[3].createResponse().topics[0],
      errorCode: errors[t.name!] ?? (t.name! in leaders ? 0 : 3),
      name: t.name,
      topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
      isInternal: false,
      topicAuthorizedOperations: -2147483648,
      partitions: (leaders[t.name!] ?? []).map((leaderId, partitionIndex) => ({
        errorCode: 0,
        partitionIndex,
        leaderId,
        leaderEpoch: 0,
        replicaNodes: [Math.max(leaderId, 1)],
        isrNodes: [Math.max(leaderId, 1)],
        offlineReplicas: [],
      })),
    })),
  }))
}

type Answer = { errorCode?: number; offset?: bigint; timestamp?: bigint; leaderEpoch?: number }

/** ListOffsets answering each asked partition through `answer`. */
function serveListOffsets(
  b: FakeBroker,
  answer: (topic: string, partition: number, timestamp: bigint) => Answer,
): void {
  b.on(2, (r) => ({
    topics: r.request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partitionIndex,
        errorCode: 0,
        timestamp: -1n,
        offset: -1n,
        leaderEpoch: -1,
        ...answer(t.name, p.partitionIndex, p.timestamp),
      })),
    })),
  }))
}

const asked = (b: FakeBroker): Array<[string, number, bigint, number]> =>
  b
    .requestsOf(2)
    .flatMap((r) =>
      (r.request as ListOffsetsRequest).topics.flatMap((t) =>
        t.partitions.map(
          (p) => [t.name, p.partitionIndex, p.timestamp, r.version] as [string, number, bigint, number],
        ),
      ),
    )

describe('listOffsets', () => {
  it('asks each partition of the leader Metadata names, with the spec timestamps, and returns per partition', async () => {
    const b1 = await broker()
    const b2 = await broker()
    serveMetadata(b1, [b1, b2], { t: [1, 2] })
    serveListOffsets(b1, (_t, p, ts) => ({ offset: 10n + BigInt(p), leaderEpoch: ts === -2n ? 3 : -1 }))
    serveListOffsets(b2, (_t, p, ts) => ({
      offset: ts === 1_700_000_000_000n ? 7n : 20n + BigInt(p),
      timestamp: 1_700_000_000_005n,
    }))
    const admin = adminOf(b1)
    const r = admin.listOffsets([
      { topic: 't', partition: 0, spec: OffsetSpec.earliest() },
      { topic: 't', partition: 1, spec: OffsetSpec.forTimestamp(1_700_000_000_000) },
    ])
    assert.deepEqual(await r.all(), [
      { topic: 't', partition: 0, offset: 10n, timestamp: -1n, leaderEpoch: 3 },
      { topic: 't', partition: 1, offset: 7n, timestamp: 1_700_000_000_005n, leaderEpoch: null },
    ])
    assert.deepEqual(asked(b1), [['t', 0, -2n, 11]])
    assert.deepEqual(asked(b2), [['t', 1, 1_700_000_000_000n, 11]])
    const req = b1.requestsOf(2)[0]!.request as ListOffsetsRequest
    assert.equal(req.replicaId, -1)
    assert.equal(req.isolationLevel, 0)
    assert.equal(req.timeoutMs, 5_000)
    await assert.rejects(r.partitionResult('t', 9), /List Offsets for partition "t-9" was not attempted/)
  })

  it('a broker too old for max timestamp fails only those partitions (UnsupportedVersion); read_committed sends level 1', async () => {
    const b = await broker()
    b.apiVersions.set(2, { min: 1, max: 6 })
    serveMetadata(b, [b], { t: [1, 1] })
    serveListOffsets(b, () => ({ offset: 4n }))
    const admin = adminOf(b)
    const r = admin.listOffsets(
      [
        { topic: 't', partition: 0, spec: OffsetSpec.maxTimestamp() },
        { topic: 't', partition: 1, spec: OffsetSpec.latest() },
      ],
      { isolationLevel: 'read_committed' },
    )
    await assert.rejects(r.partitionResult('t', 0), (e) => e instanceof UnsupportedVersionError)
    assert.deepEqual(await r.partitionResult('t', 1), { offset: 4n, timestamp: -1n, leaderEpoch: null })
    assert.deepEqual(asked(b), [['t', 1, -1n, 6]])
    assert.equal((b.requestsOf(2)[0]!.request as ListOffsetsRequest).isolationLevel, 1)
    // Earliest-local (v8) with no max-timestamp partition in the batch fails the batch.
    const local = admin.listOffsets([{ topic: 't', partition: 1, spec: OffsetSpec.earliestLocal() }])
    await assert.rejects(local.all(), (e) => e instanceof UnsupportedVersionError)
  })

  it("unknown topics fail with Kafka's lookup message; retriable errors are retried; others fail the partition", async () => {
    const b = await broker()
    serveMetadata(b, [b], { t: [1, 1, 1] }, { secret: 29 })
    let notLeaderOnce = true
    serveListOffsets(b, (_t, p) => {
      if (p === 0 && notLeaderOnce) {
        notLeaderOnce = false
        return { errorCode: 6 }
      }
      if (p === 1) return { errorCode: 35 }
      return { offset: 0n, leaderEpoch: 0 }
    })
    const admin = adminOf(b)
    const r = admin.listOffsets([
      { topic: 't', partition: 0, spec: OffsetSpec.latest() },
      { topic: 't', partition: 1, spec: OffsetSpec.latest() },
      { topic: 'gone', partition: 0, spec: OffsetSpec.latest() },
      { topic: 'secret', partition: 0, spec: OffsetSpec.latest() },
    ])
    assert.deepEqual(await r.partitionResult('t', 0), { offset: 0n, timestamp: -1n, leaderEpoch: 0 })
    await assert.rejects(r.partitionResult('t', 1), (e) => e instanceof UnsupportedVersionError)
    await assert.rejects(r.partitionResult('gone', 0), (e) => {
      assert.ok(e instanceof KafkaError)
      assert.equal(
        e.toString(),
        'org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Failed to fetch metadata for partition gone-0 because metadata for topic `gone` could not be found',
      )
      return true
    })
    await assert.rejects(r.partitionResult('secret', 0), (e) => {
      assert.equal(
        String(e),
        'org.apache.kafka.common.errors.TopicAuthorizationException: Failed to fetch metadata for partition secret-0 due to topic authorization failure',
      )
      return true
    })
    await assert.rejects(r.all(), (e) => e instanceof UnsupportedVersionError)
  })

  it('a partition the topic does not have is looked up until the deadline (TimeoutException)', async () => {
    const b = await broker()
    serveMetadata(b, [b], { t: [1] })
    serveListOffsets(b, () => ({ offset: 0n }))
    const admin = adminOf(b, 300)
    const r = admin.listOffsets([{ topic: 't', partition: 5, spec: OffsetSpec.latest() }])
    await assert.rejects(
      r.all(),
      (e) => e instanceof KafkaError && e.javaClassName.endsWith('TimeoutException'),
    )
    assert.equal(b.requestsOf(2).length, 0)
  })
})

describe('alterStreamsGroupOffsets and deleteStreamsGroupOffsets', () => {
  it('commits as an admin; per-partition errors; all() names every failed partition in Kafka order', async () => {
    const b = await broker()
    let attempts = 0
    b.on(8, (r) => {
      // First attempt: the coordinator is still loading; then per-partition outcomes.
      const loading = attempts++ === 0
      return {
        topics: r.request.topics.map((t) => ({
          name: t.name,
          topicId: t.topicId,
          partitions: t.partitions.map((p) => ({
            partitionIndex: p.partitionIndex,
            errorCode: loading ? 14 : t.name === 'bad' ? 3 : p.partitionIndex === 2 ? 29 : 0,
          })),
        })),
      }
    })
    const admin = adminOf(b)
    const p = admin.alterStreamsGroupOffsets('app', [
      { topic: 'orders', partition: 0, offset: 5n },
      { topic: 'orders', partition: 2, offset: 6n, leaderEpoch: 4, metadata: 'm' },
      { topic: 'bad', partition: 0, offset: 1n },
    ])
    await assert.rejects(p.all(), (e) => {
      assert.ok(e instanceof KafkaError)
      // Java's HashMap puts bad-0 before orders-2; the first failed partition's error is thrown.
      assert.equal(
        e.toString(),
        'org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Failed altering group offsets for the following partitions: [bad-0, orders-2]',
      )
      return true
    })
    await p.partitionResult('orders', 0)
    await assert.rejects(
      p.partitionResult('orders', 2),
      /TopicAuthorizationException|Topic authorization failed/,
    )
    await assert.rejects(
      p.partitionResult('orders', 9),
      /Alter offset for partition "orders-9" was not attempted/,
    )
    const last = b.requestsOf(8).at(-1)!.request as OffsetCommitRequest
    assert.equal(last.generationIdOrMemberEpoch, -1)
    assert.equal(last.memberId, '')
    assert.deepEqual(
      last.topics.map((t) => [
        t.name,
        t.partitions.map((x) => [
          x.partitionIndex,
          x.committedOffset,
          x.committedLeaderEpoch,
          x.committedMetadata,
        ]),
      ]),
      [
        [
          'orders',
          [
            [0, 5n, -1, ''],
            [2, 6n, 4, 'm'],
          ],
        ],
        ['bad', [[0, 1n, -1, '']]],
      ],
    )
    assert.equal(b.requestsOf(8).length, 2, 'retried once after COORDINATOR_LOAD_IN_PROGRESS')
  })

  it('deleteStreamsGroupOffsets: group errors fail everything, partition errors their partition', async () => {
    const b = await broker()
    b.on(47, (r) =>
      r.request.groupId === 'missing'
        ? { errorCode: 69 }
        : {
            topics: r.request.topics.map((t) => ({
              name: t.name,
              partitions: t.partitions.map((p) => ({
                partitionIndex: p.partitionIndex,
                errorCode: t.name === 'in' ? 86 : 0,
              })),
            })),
          },
    )
    const admin = adminOf(b)
    const d = admin.deleteStreamsGroupOffsets('app', [
      { topic: 'out', partition: 0 },
      { topic: 'in', partition: 1 },
    ])
    await d.partitionResult('out', 0)
    await assert.rejects(d.partitionResult('in', 1), (e) => {
      assert.equal(
        String(e),
        'org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.',
      )
      return true
    })
    await assert.rejects(d.all(), /GroupSubscribedToTopicException/)
    assert.throws(() => d.partitionResult('x', 0), /Partition x-0 was not included in the original request/)
    const gone = admin.deleteStreamsGroupOffsets('missing', [{ topic: 'out', partition: 0 }])
    await assert.rejects(gone.all(), (e) => {
      assert.equal(
        String(e),
        'org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.',
      )
      return true
    })
    await assert.rejects(gone.partitionResult('out', 0), /GroupIdNotFoundException/)
  })
})

describe('describeTopics and deleteTopics', () => {
  it('partitions by number with leaders; unknown topics fail with the default message', async () => {
    const b = await broker()
    serveMetadata(b, [b], { t: [1, -1] })
    const admin = adminOf(b)
    const r = admin.describeTopics(['t', 'nope'])
    const t = await r.get('t')
    assert.deepEqual(
      t.partitions.map((p) => [p.partition, p.leader?.nodeId ?? null]),
      [
        [0, 1],
        [1, null],
      ],
    )
    await assert.rejects(r.get('nope'), (e) => {
      assert.equal(
        String(e),
        'org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.',
      )
      return true
    })
    const md = b.requestsOf(3).at(-1)!.request as { allowAutoTopicCreation: boolean }
    assert.equal(md.allowAutoTopicCreation, false)
  })

  it("deleteTopics carries the broker's message for a failed topic", async () => {
    const b = await broker()
    b.on(20, (r) => ({
      responses: r.request.topics.map((t) => ({
        name: t.name,
        topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
        errorCode: t.name === 'gone' ? 3 : 0,
        errorMessage: t.name === 'gone' ? 'Topic gone not found.' : null,
      })),
    }))
    const admin = adminOf(b)
    const r = admin.deleteTopics(['a-changelog', 'gone'])
    await r.get('a-changelog')
    await assert.rejects(r.get('gone'), /UnknownTopicOrPartitionException: Topic gone not found\./)
  })
})
