// Metadata answers from the cached topic bytes (handlers/003-metadata.ts) against the generated
// writer: after every catalog or ACL change, for every version, principal and request form, the
// router's answer must be byte for byte the generated writer's encoding of the same response, and
// say what the catalog and the ACLs say. A real catalog on the memory store, the real ACL
// authorizer and the real router; no sockets.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { MemoryRecordStore } from '../../src/coordinator/storage/memory.js'
import type { MetadataRequest } from '../../src/protocol/generated/messages/MetadataRequest.js'
import {
  type MetadataResponse,
  readMetadataResponse,
} from '../../src/protocol/generated/messages/MetadataResponse.js'
import { apiDefinition } from '../../src/protocol/generated/registry.js'
import { Reader } from '../../src/protocol/reader.js'
import { Writer } from '../../src/protocol/writer.js'
import type { AclOperationCodeName } from '../../src/server/auth/acl.js'
import { AclAuthorizer } from '../../src/server/auth/authorizer.js'
import { parseConfig } from '../../src/server/config.js'
import { handler } from '../../src/server/handlers/003-metadata.js'
import { createLogger } from '../../src/server/logger.js'
import { ClientQuotas } from '../../src/server/quotas/client-quotas.js'
import {
  type AdvertisedNode,
  ApiRouter,
  encodeResponseFrame,
  type RequestContext,
  type ServerContext,
} from '../../src/server/router.js'
import { TopicCatalog, ZERO_UUID } from '../../src/server/topics/catalog.js'
import { ANSWER_SLAB_BYTES, type AnswerOutput } from '../../src/server/connection.js'
import { requestFrame } from './wire-client.js'

const NO_OPERATIONS = -2147483648
const NODE_ID = 7
const def = apiDefinition(3)!

/** A server context with what Metadata reads: the catalog, the ACLs, the config, the nodes. */
async function fixture(raw: Record<string, string> = {}) {
  const store = new MemoryRecordStore()
  await store.open()
  let n = 0
  const catalog = await TopicCatalog.load(store, {
    nodeId: NODE_ID,
    newTopicId: () => Buffer.alloc(16, ++n).toString('base64url'),
    defaultNumPartitions: 2,
  })
  const authorizer = await AclAuthorizer.load(store, {
    superUsers: ['User:admin'],
    allowEveryoneIfNoAclFound: false,
  })
  const nodes: Record<string, AdvertisedNode> = {
    PLAINTEXT: { nodeId: NODE_ID, host: 'localhost', port: 9092 },
    EXTERNAL: { nodeId: NODE_ID, host: 'broker.example.com', port: 19092 },
  }
  const logger = createLogger({ level: 'silent' })
  const quotas = await ClientQuotas.load({ store, logger, rate: { samples: 11, windowMs: 1000 } })
  const server = {
    config: parseConfig({ 'node.id': String(NODE_ID), ...raw }),
    logger,
    quotas,
    topics: catalog,
    clusterId: 'cluster-metadata-cache',
    nodeId: NODE_ID,
    authorizer,
    advertisedNode: (listenerName: string) => nodes[listenerName] ?? nodes.PLAINTEXT,
    supportedApis: () => [],
  } as unknown as ServerContext
  // The handler as served, with a look at each response object it gives the router.
  let answered: unknown
  const router = new ApiRouter()
  router.register({
    ...handler,
    handle(request: MetadataRequest, ctx: RequestContext) {
      const r = handler.handle(request, ctx)
      answered = r
      return r
    },
  } as typeof handler)
  router.bind(server)
  let correlationId = 0
  const answerBuffer = earlierAnswersBuffer()

  /**
   * Asks the router (the cached path) and checks its bytes against the generated writer's encoding
   * of the same response object; returns the decoded answer.
   */
  async function metadata(
    version: number,
    body: Partial<MetadataRequest>,
    principal = 'User:admin',
    listenerName = 'PLAINTEXT',
  ): Promise<MetadataResponse> {
    const id = ++correlationId
    // Fields older versions do not carry keep their defaults there.
    const fields: Partial<MetadataRequest> = { ...body }
    if (version < 4) delete fields.allowAutoTopicCreation
    if (version < 8) delete fields.includeTopicAuthorizedOperations
    const frame = requestFrame(3, version, id, fields).subarray(4)
    const result = router.dispatch(frame, { listenerName, principal, remote: '127.0.0.1:40000' })
    const cached = result.kind === 'pending' ? await result.promise : result
    assert.equal(cached.kind, 'response')
    const bytes = Buffer.from((cached as { bytes: Uint8Array }).bytes)
    // The uncached encoding: the same response object through the generated writer only.
    const plain = encodeResponseFrame(def, version, id, await answered)
    assert.deepEqual(bytes, plain, `v${version}: the cached answer differs from the generated writer's`)
    // The same request answered in place, as a connection does when nothing is owed before it:
    // behind earlier answers in the connection's buffer, which must stay as they were.
    const again = router.dispatch(
      frame,
      { listenerName, principal, remote: '127.0.0.1:40000' },
      answerBuffer.out,
    )
    if (again.kind === 'written') {
      const inPlace = answerBuffer.take()
      const expected = encodeResponseFrame(def, version, id, await answered)
      assert.deepEqual(inPlace, expected, `v${version}: the answer written in place differs`)
    } else {
      // Only an answer that is not ready at once (auto-creation) takes the other path.
      assert.equal(again.kind, 'pending')
      await again.promise
    }
    const r = new Reader(bytes.subarray(8 + (version >= 9 ? 1 : 0)))
    return readMetadataResponse(r, version)
  }

  const grant = (principal: string, topic: string, operation: AclOperationCodeName = 'DESCRIBE') =>
    authorizer.createAcls([
      {
        resourceType: 'TOPIC',
        resourceName: topic,
        patternType: 'LITERAL',
        principal,
        host: '*',
        operation,
        permissionType: 'ALLOW',
      },
    ])
  const revoke = (principal: string, topic: string) =>
    authorizer.deleteAcls([
      {
        resourceType: 'TOPIC',
        resourceName: topic,
        patternType: 'LITERAL',
        principal,
        host: null,
        operation: 'ANY',
        permissionType: 'ANY',
      },
    ])
  const create = async (name: string, numPartitions = 3) => {
    const [o] = await catalog.createTopics(
      [{ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] }],
      false,
    )
    assert.equal(o.error, 'NONE', `creating ${name}`)
  }
  return { catalog, metadata, grant, revoke, create }
}

/**
 * A connection's answer buffer as the router sees it (AnswerOutput): each answer is written after
 * bytes of earlier answers still waiting for the socket, which `take` checks are untouched.
 */
function earlierAnswersBuffer(): { out: AnswerOutput; take: () => Buffer } {
  const buf = Buffer.alloc(ANSWER_SLAB_BYTES)
  const earlier = 37
  for (let i = 0; i < earlier; i++) buf[i] = 0xa0 + (i % 16)
  const before = Buffer.from(buf.subarray(0, earlier))
  const w = new Writer(0)
  let committed = false
  const out: AnswerOutput = {
    begin() {
      w.resetInto(buf, earlier)
      committed = false
      return w
    },
    commit() {
      committed = true
    },
    abort() {
      committed = false
    },
  }
  const take = () => {
    assert.ok(committed, 'the answer was not committed')
    assert.deepEqual(buf.subarray(0, earlier), before, 'an earlier answer was written over')
    return Buffer.from(w.buffer.subarray(w.start, w.end))
  }
  return { out, take }
}

const ALL = { topics: null, allowAutoTopicCreation: false }
const byName = (...names: string[]) => ({
  topics: names.map((name) => ({ name, topicId: ZERO_UUID })),
  allowAutoTopicCreation: false,
})
const byId = (...ids: string[]) => ({ topics: ids.map((topicId) => ({ name: null, topicId })) })
const summary = (m: MetadataResponse) =>
  m.topics.map((t) => `${t.name}:${t.errorCode}:${t.partitions.length}`).join(' ')

test('Metadata cache: a created topic appears in the next answer', async () => {
  const f = await fixture()
  await f.create('a')
  assert.equal(summary(await f.metadata(12, ALL)), 'a:0:3')
  await f.create('b', 1)
  assert.equal(summary(await f.metadata(12, ALL)), 'a:0:3 b:0:1')
})

test('Metadata cache: a deleted topic leaves the answer; by id it is unknown', async () => {
  const f = await fixture()
  await f.create('a')
  await f.create('b')
  const before = await f.metadata(12, ALL)
  const idA = before.topics[0].topicId
  await f.catalog.deleteTopics(['a'])
  assert.equal(summary(await f.metadata(12, ALL)), 'b:0:3')
  assert.equal(summary(await f.metadata(12, byName('a'))), 'a:3:0')
  const gone = await f.metadata(12, byId(idA))
  assert.equal(gone.topics[0].errorCode, 100) // UNKNOWN_TOPIC_ID
  assert.equal(gone.topics[0].name, null)
})

test('Metadata cache: added partitions are in the next answer, every version', async () => {
  const f = await fixture()
  await f.create('a', 2)
  for (let v = 0; v <= 13; v++)
    assert.equal(summary(await f.metadata(v, v === 0 ? { topics: [] } : ALL)), 'a:0:2')
  await f.catalog.increasePartitions('a', 5)
  for (let v = 0; v <= 13; v++) {
    const m = await f.metadata(v, v === 0 ? { topics: [] } : ALL)
    assert.equal(summary(m), 'a:0:5')
    assert.deepEqual(
      m.topics[0].partitions.map((p) => p.partitionIndex),
      [0, 1, 2, 3, 4],
    )
  }
})

test('Metadata cache: a topic deleted and created again answers with its new topic id', async () => {
  const f = await fixture()
  await f.create('a')
  const first = (await f.metadata(12, ALL)).topics[0].topicId
  await f.catalog.deleteTopics(['a'])
  await f.create('a')
  const second = (await f.metadata(12, ALL)).topics[0].topicId
  assert.notEqual(second, first)
  assert.equal((await f.metadata(12, byId(second))).topics[0].name, 'a')
  assert.equal((await f.metadata(12, byId(first))).topics[0].errorCode, 100)
})

test('Metadata cache: every version gets its own bytes, asked in any order (leader epoch from v7, ids from v10)', async () => {
  const f = await fixture()
  await f.create('a')
  await f.create('__consumer_offsets', 1)
  for (const v of [13, 0, 7, 6, 9, 8, 12, 1, 10, 5, 2, 11, 3, 4, 13, 0]) {
    const m = await f.metadata(v, v === 0 ? { topics: [] } : ALL)
    assert.equal(m.topics.length, 2)
    const a = m.topics.find((t) => t.name === 'a')!
    assert.equal(a.partitions[0].leaderId, NODE_ID)
    assert.equal(a.partitions[0].leaderEpoch, v >= 7 ? 0 : -1)
    assert.equal(a.topicId === ZERO_UUID, v < 10)
    assert.equal(m.topics.find((t) => t.name === '__consumer_offsets')!.isInternal, v >= 1)
  }
})

test('Metadata cache: each principal sees only the topics it may DESCRIBE, after every ACL change', async () => {
  const f = await fixture()
  await f.create('a')
  await f.create('b')
  await f.create('c')
  await f.grant('User:alice', 'a')
  await f.grant('User:bob', 'b')
  for (let round = 0; round < 2; round++) {
    assert.equal(summary(await f.metadata(12, ALL, 'User:alice')), 'a:0:3')
    assert.equal(summary(await f.metadata(12, ALL, 'User:bob')), 'b:0:3')
    assert.equal(summary(await f.metadata(12, ALL, 'User:admin')), 'a:0:3 b:0:3 c:0:3')
  }
  // By name: not disclosed (TOPIC_AUTHORIZATION_FAILED, zero id); by id: flagged with a null name.
  const named = await f.metadata(12, byName('b'), 'User:alice')
  assert.equal(named.topics[0].errorCode, 29)
  assert.equal(named.topics[0].topicId, ZERO_UUID)
  const idB = (await f.metadata(12, byName('b'), 'User:bob')).topics[0].topicId
  const flagged = await f.metadata(12, byId(idB), 'User:alice')
  assert.equal(flagged.topics[0].errorCode, 29)
  assert.equal(flagged.topics[0].name, null)
  assert.equal(flagged.topics[0].partitions.length, 0)
  await f.grant('User:alice', 'b')
  assert.equal(summary(await f.metadata(12, ALL, 'User:alice')), 'a:0:3 b:0:3')
  await f.revoke('User:alice', 'a')
  assert.equal(summary(await f.metadata(12, ALL, 'User:alice')), 'b:0:3')
  assert.equal(summary(await f.metadata(12, ALL, 'User:bob')), 'b:0:3')
})

test('Metadata cache: authorized operations per principal when asked for, the default otherwise', async () => {
  const f = await fixture()
  await f.create('a')
  await f.grant('User:alice', 'a')
  await f.grant('User:bob', 'a')
  await f.grant('User:bob', 'a', 'WRITE')
  const ask = { ...ALL, includeTopicAuthorizedOperations: true }
  for (const v of [8, 9, 10, 11, 12, 13]) {
    const alice = (await f.metadata(v, ask, 'User:alice')).topics[0].topicAuthorizedOperations
    const bob = (await f.metadata(v, ask, 'User:bob')).topics[0].topicAuthorizedOperations
    const admin = (await f.metadata(v, ask, 'User:admin')).topics[0].topicAuthorizedOperations
    assert.equal(alice, 1 << 8) // DESCRIBE
    assert.equal(bob, (1 << 8) | (1 << 4)) // DESCRIBE, WRITE
    assert.equal(admin, 0b1101_1111_1000) // every topic operation (codes 3-8, 10, 11)
    assert.equal((await f.metadata(v, ALL, 'User:bob')).topics[0].topicAuthorizedOperations, NO_OPERATIONS)
  }
  // Before v8 the flag is not on the wire: nothing to include.
  assert.equal((await f.metadata(7, ask, 'User:bob')).topics[0].partitions.length, 3)
})

test('Metadata cache: the broker list follows the listener a request came in on', async () => {
  const f = await fixture()
  await f.create('a')
  const inside = await f.metadata(12, ALL, 'User:admin', 'PLAINTEXT')
  const outside = await f.metadata(12, ALL, 'User:admin', 'EXTERNAL')
  assert.deepEqual(
    inside.brokers.map((b) => `${b.host}:${b.port}`),
    ['localhost:9092'],
  )
  assert.deepEqual(
    outside.brokers.map((b) => `${b.host}:${b.port}`),
    ['broker.example.com:19092'],
  )
  assert.equal(summary(outside), 'a:0:3')
})

test('Metadata cache: auto-creation answers UNKNOWN_TOPIC_OR_PARTITION, then the new topic', async () => {
  const f = await fixture()
  await f.create('a')
  await f.metadata(12, ALL)
  const first = await f.metadata(12, {
    topics: [
      { name: 'a', topicId: ZERO_UUID },
      { name: 'fresh', topicId: ZERO_UUID },
      { name: 'bad name!', topicId: ZERO_UUID },
    ],
    allowAutoTopicCreation: true,
  })
  assert.equal(summary(first), 'a:0:3 fresh:3:0 bad name!:17:0')
  const second = await f.metadata(12, byName('fresh'))
  // The creation is done once the answer is: the topic is there with the default partition count.
  assert.equal(summary(second), 'fresh:0:2')
  assert.equal(summary(await f.metadata(12, ALL)), 'a:0:3 fresh:0:2')
})

// Kafka's AutoTopicCreationManager creates the coordinators' topics with their own partition
// counts and log configs (GroupCoordinatorService.groupMetadataTopicConfigs,
// TransactionCoordinator.transactionStateTopicConfigs), not with num.partitions: `kcat -L -t
// __consumer_offsets` against Kafka shows offsets.topic.num.partitions partitions.
test("Metadata cache: auto-creation gives the coordinators' topics their partition counts and configs", async () => {
  const f = await fixture({
    'offsets.topic.num.partitions': '5',
    'transaction.state.log.num.partitions': '4',
  })
  const first = await f.metadata(12, {
    ...byName('__consumer_offsets', '__transaction_state', 'plain'),
    allowAutoTopicCreation: true,
  })
  assert.equal(summary(first), '__consumer_offsets:3:0 __transaction_state:3:0 plain:3:0')
  const second = await f.metadata(12, byName('__consumer_offsets', '__transaction_state', 'plain'))
  assert.equal(summary(second), '__consumer_offsets:0:5 __transaction_state:0:4 plain:0:2')
  assert.deepEqual(
    second.topics.map((t) => t.isInternal),
    [true, true, false],
  )
  assert.deepEqual(f.catalog.byName('__consumer_offsets')?.configs, {
    'cleanup.policy': 'compact',
    'compression.type': 'producer',
    'segment.bytes': '104857600',
  })
  assert.deepEqual(f.catalog.byName('__transaction_state')?.configs, {
    'cleanup.policy': 'compact',
    'compression.type': 'uncompressed',
    'segment.bytes': '104857600',
  })
  assert.deepEqual(f.catalog.byName('plain')?.configs, {})
})

// The segment size comes from offsets.topic.segment.bytes and transaction.state.log.segment.bytes
// (GroupCoordinatorConfig, TransactionLogConfig), not a fixed 100 MiB.
test("Metadata cache: auto-creation gives the coordinators' topics their configured segment.bytes", async () => {
  const f = await fixture({
    'offsets.topic.segment.bytes': '1048576',
    'transaction.state.log.segment.bytes': '2097152',
  })
  await f.metadata(12, {
    ...byName('__consumer_offsets', '__transaction_state'),
    allowAutoTopicCreation: true,
  })
  assert.equal(f.catalog.byName('__consumer_offsets')?.configs['segment.bytes'], '1048576')
  assert.equal(f.catalog.byName('__transaction_state')?.configs['segment.bytes'], '2097152')
})

// Kafka 4.x creates the share coordinator's topic the same way (DefaultAutoTopicCreationManager,
// ShareCoordinatorService.shareGroupStateTopicConfigs): share.coordinator.state.topic.num.partitions
// partitions, cleanup.policy=delete, compression.type=producer,
// share.coordinator.state.topic.segment.bytes, retention.ms=-1.
test("Metadata cache: auto-creation gives the share coordinator's topic its partition count and configs", async () => {
  const f = await fixture({
    'share.coordinator.state.topic.num.partitions': '3',
    'share.coordinator.state.topic.segment.bytes': '2097152',
  })
  const first = await f.metadata(12, { ...byName('__share_group_state'), allowAutoTopicCreation: true })
  assert.equal(summary(first), '__share_group_state:3:0')
  const second = await f.metadata(12, byName('__share_group_state'))
  assert.equal(summary(second), '__share_group_state:0:3')
  assert.equal(second.topics[0]?.isInternal, true)
  assert.deepEqual(f.catalog.byName('__share_group_state')?.configs, {
    'cleanup.policy': 'delete',
    'compression.type': 'producer',
    'retention.ms': '-1',
    'segment.bytes': '2097152',
  })
})

test('Metadata cache: the cached answer equals the generated encoding after random catalog and ACL changes', async () => {
  const names = ['t0', 't1', 't2', 't3', '__consumer_offsets']
  const principals = ['User:admin', 'User:alice', 'User:bob']
  const command = fc.oneof(
    fc.record({
      kind: fc.constant('create' as const),
      name: fc.constantFrom(...names),
      n: fc.integer({ min: 1, max: 6 }),
    }),
    fc.record({ kind: fc.constant('delete' as const), name: fc.constantFrom(...names) }),
    fc.record({
      kind: fc.constant('grow' as const),
      name: fc.constantFrom(...names),
      by: fc.integer({ min: 1, max: 4 }),
    }),
    fc.record({ kind: fc.constant('configs' as const), name: fc.constantFrom(...names) }),
    fc.record({
      kind: fc.constant('grant' as const),
      principal: fc.constantFrom('User:alice', 'User:bob'),
      name: fc.constantFrom(...names),
    }),
    fc.record({
      kind: fc.constant('revoke' as const),
      principal: fc.constantFrom('User:alice', 'User:bob'),
      name: fc.constantFrom(...names),
    }),
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('ask' as const),
        version: fc.integer({ min: 0, max: 13 }),
        principal: fc.constantFrom(...principals),
        listener: fc.constantFrom('PLAINTEXT', 'EXTERNAL'),
        ops: fc.boolean(),
        form: fc.constantFrom('all', 'names', 'ids'),
        pick: fc.subarray(names),
      }),
    },
  )
  await fc.assert(
    fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 40 }), async (steps) => {
      // Every topic exists at first and every principal may see some: most answers list topics.
      const commands = [
        ...names.map((name, i) => ({ kind: 'create' as const, name, n: 1 + (i % 3) })),
        { kind: 'grant' as const, principal: 'User:alice', name: names[0] },
        { kind: 'grant' as const, principal: 'User:alice', name: names[1] },
        { kind: 'grant' as const, principal: 'User:bob', name: names[1] },
        { kind: 'grant' as const, principal: 'User:bob', name: names[4] },
        ...steps,
      ]
      // Without auto-creation: before v4 every request by name allows it.
      const f = await fixture({ 'auto.create.topics.enable': 'false' })
      // The model: what the catalog and the ACLs hold.
      const topics = new Map<string, { partitions: number; id?: string }>()
      const acl = new Set<string>()
      const sees = (p: string, t: string) => p === 'User:admin' || acl.has(`${p}|${t}`)
      for (const c of commands) {
        switch (c.kind) {
          case 'create':
            if (topics.has(c.name)) break
            await f.create(c.name, c.n)
            topics.set(c.name, { partitions: c.n, id: f.catalog.byName(c.name)!.topicId })
            break
          case 'delete':
            await f.catalog.deleteTopics([c.name])
            topics.delete(c.name)
            break
          case 'grow': {
            const t = topics.get(c.name)
            if (t === undefined) break
            await f.catalog.increasePartitions(c.name, t.partitions + c.by)
            t.partitions += c.by
            break
          }
          case 'configs':
            await f.catalog.setConfigs(c.name, { 'retention.ms': String(commands.length) })
            break
          case 'grant':
            await f.grant(c.principal, c.name)
            acl.add(`${c.principal}|${c.name}`)
            break
          case 'revoke':
            await f.revoke(c.principal, c.name)
            acl.delete(`${c.principal}|${c.name}`)
            break
          case 'ask': {
            const v = c.version
            const ids = c.form === 'ids' && v >= 12
            const all = c.form === 'all' || (c.form === 'names' && c.pick.length === 0 && v === 0)
            let body: Partial<MetadataRequest>
            if (all) body = { topics: v === 0 ? [] : null }
            else if (ids)
              body = byId(
                ...c.pick.map((n) => topics.get(n)?.id ?? Buffer.alloc(16, 200).toString('base64url')),
              )
            else body = byName(...c.pick)
            if (ids && c.pick.length === 0) body = { topics: v === 0 ? [] : null }
            body = { ...body, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: c.ops }
            const m = await f.metadata(v, body, c.principal, c.listener)
            // What the model says the answer holds.
            const listed = all || (ids && c.pick.length === 0)
            if (listed) {
              const expected = [...topics.keys()].filter((t) => sees(c.principal, t)).sort()
              assert.deepEqual(
                m.topics.map((t) => t.name),
                expected,
              )
            }
            for (const t of m.topics) {
              if (t.errorCode !== 0) {
                assert.equal(t.partitions.length, 0)
                continue
              }
              const model = topics.get(t.name!)
              assert.ok(model !== undefined, `${t.name} is not in the catalog`)
              assert.ok(sees(c.principal, t.name!), `${c.principal} may not see ${t.name}`)
              assert.equal(t.partitions.length, model.partitions)
              if (v >= 10) assert.equal(t.topicId, model.id)
              if (v >= 8) assert.equal(t.topicAuthorizedOperations === NO_OPERATIONS, !c.ops)
            }
            break
          }
        }
      }
    }),
    { numRuns: 100 },
  )
})
