// Authorization of every group API over SASL_SSL (certificates made for the test) with the ACL authorizer: for each API the
// operation Kafka checks, a principal that holds it and one that does not, Kafka's error codes and
// answer order, and the authorized-operations bit sets. One server for the whole file.
//
// Principals: admin (super user), alice (READ + DELETE on groups `az-*`, READ on topic az-in,
// DESCRIBE on topics `az-streams-*`, READ on the missing topic az-ghost), bob (no ACL), carol
// (DESCRIBE on groups `az-*` only), dave (DESCRIBE on the cluster only).
import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { scramUserEntry } from '../../src/server/auth/scram.js'
import type { CallLogEntry } from '../helpers/controllable-plugin.js'
import { FAST_GROUPS, type PluginFiles, pluginFiles, waitFor, wireDescription } from '../helpers/kip1331.js'
import { simpleTopology } from '../helpers/streams-member.js'
import { makeCerts, SecureClient, scramLogin, type TestCerts } from '../server/auth/helpers.js'
import { startTestServer, type TestServer } from '../server/harness.js'

const USERS = ['admin', 'alice', 'bob', 'carol', 'dave']
const NOT_REQUESTED = -2147483648
/** Kafka's AclOperation bits of a GROUP: READ 3, DELETE 6, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11. */
const bit = (...codes: number[]) => codes.reduce((b, c) => b | (1 << c), 0)
const GROUP_ALL = bit(3, 6, 8, 10, 11)
const ALICE_GROUP_OPS = bit(3, 6, 8)
const CAROL_GROUP_OPS = bit(8)
const TOPIC_FILTER_MESSAGE = 'The described group uses topics that the client is not authorized to describe.'

// Resource type, pattern type, operation and permission codes of the ACL APIs.
const TOPIC = 2
const GROUP = 3
const CLUSTER = 4
const LITERAL = 3
const PREFIXED = 4
const op = { READ: 3, CREATE: 5, DELETE: 6, DESCRIBE: 8 } as const

let ts: TestServer
let plugin: PluginFiles
const clients = new Map<string, SecureClient>()
let certs: TestCerts

async function login(user: string): Promise<SecureClient> {
  const c = await SecureClient.connect(ts.port, { ca: certs.caCert })
  assert.equal((await scramLogin(c, 'SCRAM-SHA-512', user, `${user}-pw`))?.errorCode, 0)
  return c
}

/** One request as `user` (one authenticated connection per principal). */
async function req<T = Record<string, unknown>>(
  user: string,
  apiKey: number,
  version: number,
  body: unknown,
): Promise<T> {
  let c = clients.get(user)
  if (c === undefined) {
    c = await login(user)
    clients.set(user, c)
  }
  const r = await c.request<T>(apiKey, version, body)
  assert.ok(r !== null, `${user}: api ${apiKey} v${version} closed the connection`)
  return r
}

async function allow(
  principal: string,
  resourceType: number,
  resourceName: string,
  operation: number,
  pattern = LITERAL,
): Promise<void> {
  const r = await req<{ results: { errorCode: number }[] }>('admin', 30, 3, {
    creations: [
      {
        resourceType,
        resourceName,
        resourcePatternType: pattern,
        principal: `User:${principal}`,
        host: '*',
        operation,
        permissionType: 3,
      },
    ],
  })
  assert.equal(r.results[0].errorCode, 0)
}

async function createTopic(name: string, numPartitions: number): Promise<string> {
  const r = await req<{ topics: { name: string; errorCode: number; topicId: string }[] }>('admin', 19, 7, {
    topics: [{ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 5000,
  })
  assert.equal(r.topics[0].errorCode, 0)
  return r.topics[0].topicId
}

type PartitionErrors = {
  topics: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[]
}
const errorsOf = (r: PartitionErrors) =>
  r.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])

/** An offset commit of a simple group (no generation, no member). */
function commit(
  user: string,
  groupId: string,
  topics: { name: string; partitions: number[] }[],
  offset = 5n,
): Promise<PartitionErrors> {
  return req<PartitionErrors>(user, 8, 8, {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    topics: topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p,
        committedOffset: offset,
        committedLeaderEpoch: -1,
        committedMetadata: '',
      })),
    })),
  })
}

type StreamsHeartbeat = {
  errorCode: number
  errorMessage: string | null
  memberId: string
  memberEpoch: number
  status: { statusCode: number; statusDetail: string }[] | null
}

function streamsJoin(
  user: string,
  groupId: string,
  memberId: string,
  topology = simpleTopology(['az-in'], { changelog: 'az-streams-store-changelog' }),
  memberEpoch = 0,
): Promise<StreamsHeartbeat> {
  const joining = memberEpoch === 0
  return req<StreamsHeartbeat>(user, 88, 1, {
    groupId,
    memberId,
    memberEpoch,
    endpointInformationEpoch: 0,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: joining ? 5000 : -1,
    topology: joining ? topology : null,
    activeTasks: [],
    standbyTasks: [],
    warmupTasks: [],
    processId: joining ? `${memberId}-process` : null,
    userEndpoint: null,
    clientTags: joining ? [] : null,
    taskOffsets: null,
    taskEndOffsets: null,
    shutdownApplication: false,
  })
}

const topicExists = () => ts.server.context.topics.byName('az-streams-store-changelog') !== undefined
const pluginCalls = (groupId: string): CallLogEntry[] => plugin.calls().filter((c) => c.groupId === groupId)

before(async () => {
  plugin = pluginFiles('memory')
  certs = makeCerts()
  ts = await startTestServer({
    ...FAST_GROUPS,
    ...plugin.configs,
    'group.initial.rebalance.delay.ms': '0',
    listeners: 'SASL_SSL://127.0.0.1:0',
    'ssl.keystore.certificate.chain': readFileSync(certs.serverCert, 'utf8'),
    'ssl.keystore.key': readFileSync(certs.serverKey, 'utf8'),
    'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
    'sasl.scram.users': USERS.map((u) =>
      scramUserEntry(u, 'SCRAM-SHA-512', `${u}-pw`, { iterations: 4096 }),
    ).join(','),
    'connection.failed.authentication.delay.ms': '0',
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users': 'User:admin',
  })
  await createTopic('az-in', 2)
  await createTopic('az-secret', 1)
  await allow('alice', GROUP, 'az-', op.READ, PREFIXED)
  await allow('alice', GROUP, 'az-', op.DELETE, PREFIXED)
  await allow('alice', TOPIC, 'az-in', op.READ)
  await allow('alice', TOPIC, 'az-ghost', op.READ)
  await allow('alice', TOPIC, 'az-streams-', op.DESCRIBE, PREFIXED)
  await allow('carol', GROUP, 'az-', op.DESCRIBE, PREFIXED)
  await allow('dave', CLUSTER, 'kafka-cluster', op.DESCRIBE)
  // Offsets of a simple group on both topics, and a group only the cluster view shows.
  assert.deepEqual(
    errorsOf(
      await commit('admin', 'az-offsets', [
        { name: 'az-in', partitions: [0, 1] },
        { name: 'az-secret', partitions: [0] },
      ]),
    ),
    [
      [
        'az-in',
        [
          [0, 0],
          [1, 0],
        ],
      ],
      ['az-secret', [[0, 0]]],
    ],
  )
  await commit('admin', 'zz-hidden', [{ name: 'az-in', partitions: [0] }])
})

after(async () => {
  for (const c of clients.values()) c.close()
  await ts?.stop()
  plugin?.remove()
  if (certs !== undefined) rmSync(certs.dir, { recursive: true, force: true })
})

describe('classic group APIs: READ on the GROUP', { timeout: 60_000 }, () => {
  it('JoinGroup (11), SyncGroup (14), Heartbeat (12), LeaveGroup (13)', async () => {
    const join = (user: string, memberId: string) =>
      req<{ errorCode: number; memberId: string; generationId: number; protocolName: string | null }>(
        user,
        11,
        5,
        {
          groupId: 'az-classic',
          sessionTimeoutMs: 10000,
          rebalanceTimeoutMs: 10000,
          memberId,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: Buffer.from([0, 1]) }],
        },
      )
    for (const user of ['bob', 'carol']) {
      const denied = await join(user, '')
      assert.equal(denied.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED, user)
      assert.equal(denied.memberId, '')
    }
    const first = await join('alice', '')
    assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED)
    const joined = await join('alice', first.memberId)
    assert.equal(joined.errorCode, 0)
    assert.equal(joined.protocolName, 'range')

    const member = { groupId: 'az-classic', generationId: joined.generationId, memberId: joined.memberId }
    const sync = (user: string) =>
      req<{ errorCode: number; assignment: Uint8Array }>(user, 14, 3, {
        ...member,
        groupInstanceId: null,
        assignments: [{ memberId: joined.memberId, assignment: Buffer.from([7]) }],
      })
    assert.equal((await sync('bob')).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    assert.equal((await sync('carol')).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    const synced = await sync('alice')
    assert.equal(synced.errorCode, 0)
    assert.deepEqual([...synced.assignment], [7])

    const heartbeat = (user: string) =>
      req<{ errorCode: number }>(user, 12, 3, { ...member, groupInstanceId: null })
    assert.equal((await heartbeat('bob')).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    assert.equal((await heartbeat('carol')).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    assert.equal((await heartbeat('alice')).errorCode, 0)

    const leave = (user: string) =>
      req<{ errorCode: number; members: { memberId: string; errorCode: number }[] }>(user, 13, 3, {
        groupId: 'az-classic',
        members: [{ memberId: joined.memberId, groupInstanceId: null }],
      })
    const deniedLeave = await leave('bob')
    assert.equal(deniedLeave.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    assert.deepEqual(deniedLeave.members, [])
    assert.equal((await leave('carol')).errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    const left = await leave('alice')
    assert.equal(left.errorCode, 0)
    assert.deepEqual(
      left.members.map((m) => [m.memberId, m.errorCode]),
      [[joined.memberId, 0]],
    )
  })
})

describe('offset APIs', { timeout: 60_000 }, () => {
  it('OffsetCommit (8): READ on the GROUP, then READ on each TOPIC (before the unknown-topic check)', async () => {
    const topics = [
      { name: 'az-in', partitions: [0, 1] },
      { name: 'az-secret', partitions: [0] },
      { name: 'az-ghost', partitions: [0] },
      { name: 'az-nowhere', partitions: [0] },
    ]
    for (const user of ['bob', 'carol']) {
      assert.deepEqual(
        errorsOf(await commit(user, 'az-commits', topics)),
        topics.map((t) => [t.name, t.partitions.map((p) => [p, ErrorCode.GROUP_AUTHORIZATION_FAILED])]),
        user,
      )
    }
    assert.deepEqual(errorsOf(await commit('alice', 'az-commits', topics)), [
      [
        'az-in',
        [
          [0, 0],
          [1, 0],
        ],
      ],
      ['az-secret', [[0, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
      ['az-ghost', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
      ['az-nowhere', [[0, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
    ])
    // v10 names topics by id: an unknown id is UNKNOWN_TOPIC_ID, a known one without READ is refused.
    const secretId = ts.server.context.topics.byName('az-secret')?.topicId
    const inId = ts.server.context.topics.byName('az-in')?.topicId
    const v10 = await req<{ topics: { topicId: string; partitions: { errorCode: number }[] }[] }>(
      'alice',
      8,
      10,
      {
        groupId: 'az-commits',
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [inId, secretId, 'AAAAAAAAAAAAAAAAAAAAAQ'].map((topicId) => ({
          topicId,
          partitions: [
            { partitionIndex: 0, committedOffset: 9n, committedLeaderEpoch: -1, committedMetadata: '' },
          ],
        })),
      },
    )
    assert.deepEqual(
      v10.topics.map((t) => t.partitions[0].errorCode),
      [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.UNKNOWN_TOPIC_ID],
    )
    // Nothing was written for the refused partitions.
    const fetched = await req<OffsetFetchV8>('admin', 9, 8, {
      groups: [{ groupId: 'az-commits', topics: null }],
      requireStable: false,
    })
    assert.deepEqual(
      fetched.groups[0].topics.map((t) => [
        t.name,
        t.partitions.map((p) => [p.partitionIndex, p.committedOffset]),
      ]),
      [
        [
          'az-in',
          [
            [0, 9n],
            [1, 5n],
          ],
        ],
      ],
    )
  })

  type OffsetFetchV8 = {
    groups: {
      groupId: string
      errorCode: number
      topics: {
        name: string
        partitions: { partitionIndex: number; committedOffset: bigint; metadata: string; errorCode: number }[]
      }[]
    }[]
  }

  it('OffsetFetch (9): DESCRIBE on each GROUP; DESCRIBE on each TOPIC, refused topics last', async () => {
    const ask = {
      groups: [
        {
          groupId: 'az-offsets',
          memberId: null,
          memberEpoch: -1,
          topics: [
            { name: 'az-secret', partitionIndexes: [0] },
            { name: 'az-in', partitionIndexes: [0, 1] },
          ],
        },
        { groupId: 'zz-hidden', memberId: null, memberEpoch: -1, topics: null },
      ],
      requireStable: false,
    }
    const shape = (r: OffsetFetchV8) =>
      r.groups.map((g) => [
        g.groupId,
        g.errorCode,
        g.topics.map((t) => [
          t.name,
          t.partitions.map((p) => [p.partitionIndex, p.committedOffset, p.errorCode]),
        ]),
      ])
    assert.deepEqual(shape(await req<OffsetFetchV8>('alice', 9, 8, ask)), [
      [
        'az-offsets',
        0,
        [
          [
            'az-in',
            [
              [0, 5n, 0],
              [1, 5n, 0],
            ],
          ],
          ['az-secret', [[0, -1n, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
        ],
      ],
      ['zz-hidden', ErrorCode.GROUP_AUTHORIZATION_FAILED, []],
    ])
    // carol may describe the group but no topic.
    assert.deepEqual(shape(await req<OffsetFetchV8>('carol', 9, 8, ask))[0], [
      'az-offsets',
      0,
      [
        ['az-secret', [[0, -1n, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
        [
          'az-in',
          [
            [0, -1n, ErrorCode.TOPIC_AUTHORIZATION_FAILED],
            [1, -1n, ErrorCode.TOPIC_AUTHORIZATION_FAILED],
          ],
        ],
      ],
    ])
    assert.deepEqual(
      shape(await req<OffsetFetchV8>('bob', 9, 8, ask)).map((g) => g.slice(0, 2)),
      [
        ['az-offsets', ErrorCode.GROUP_AUTHORIZATION_FAILED],
        ['zz-hidden', ErrorCode.GROUP_AUTHORIZATION_FAILED],
      ],
    )
    // Every topic: only the topics the principal may describe.
    const all = {
      groups: [{ groupId: 'az-offsets', memberId: null, memberEpoch: -1, topics: null }],
      requireStable: false,
    }
    assert.deepEqual(
      (await req<OffsetFetchV8>('alice', 9, 8, all)).groups[0].topics.map((t) => t.name),
      ['az-in'],
    )
    assert.deepEqual((await req<OffsetFetchV8>('carol', 9, 8, all)).groups[0].topics, [])
    assert.deepEqual(
      (await req<OffsetFetchV8>('admin', 9, 8, all)).groups[0].topics.map((t) => t.name).sort(),
      ['az-in', 'az-secret'],
    )
    // v7 (one group, top-level error) and v1 (the group error on every partition asked for).
    const v7 = await req<{ errorCode: number; topics: unknown[] }>('bob', 9, 7, {
      groupId: 'az-offsets',
      topics: null,
      requireStable: false,
    })
    assert.deepEqual([v7.errorCode, v7.topics], [ErrorCode.GROUP_AUTHORIZATION_FAILED, []])
    const v7all = await req<PartitionErrors>('alice', 9, 7, {
      groupId: 'az-offsets',
      topics: null,
      requireStable: false,
    })
    assert.deepEqual(
      v7all.topics.map((t) => t.name),
      ['az-in'],
    )
    const v1 = await req<PartitionErrors>('bob', 9, 1, {
      groupId: 'az-offsets',
      topics: [{ name: 'az-in', partitionIndexes: [0, 1] }],
    })
    assert.deepEqual(errorsOf(v1), [
      [
        'az-in',
        [
          [0, ErrorCode.GROUP_AUTHORIZATION_FAILED],
          [1, ErrorCode.GROUP_AUTHORIZATION_FAILED],
        ],
      ],
    ])
  })

  it('OffsetDelete (47): DELETE on the GROUP, then READ on each TOPIC (before the unknown-topic check)', async () => {
    await commit('admin', 'az-deletable', [
      { name: 'az-in', partitions: [0] },
      { name: 'az-secret', partitions: [0] },
    ])
    const del = (user: string) =>
      req<{ errorCode: number } & PartitionErrors>(user, 47, 0, {
        groupId: 'az-deletable',
        topics: [
          { name: 'az-in', partitions: [{ partitionIndex: 0 }] },
          { name: 'az-secret', partitions: [{ partitionIndex: 0 }] },
          { name: 'az-ghost', partitions: [{ partitionIndex: 0 }] },
        ],
      })
    for (const user of ['bob', 'carol']) {
      const denied = await del(user)
      assert.deepEqual([denied.errorCode, denied.topics], [ErrorCode.GROUP_AUTHORIZATION_FAILED, []], user)
    }
    const done = await del('alice')
    assert.equal(done.errorCode, 0)
    assert.deepEqual(errorsOf(done), [
      ['az-in', [[0, 0]]],
      ['az-secret', [[0, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
      ['az-ghost', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
    ])
    const left = await req<OffsetFetchV8>('admin', 9, 8, {
      groups: [{ groupId: 'az-deletable', memberId: null, memberEpoch: -1, topics: null }],
      requireStable: false,
    })
    assert.deepEqual(
      left.groups[0].topics.map((t) => t.name),
      ['az-secret'],
    )
  })
})

describe('group listing, describing and deleting', { timeout: 60_000 }, () => {
  type Described = {
    groups: { groupId: string; errorCode: number; groupState: string; authorizedOperations: number }[]
  }
  const rows = (r: Described) => r.groups.map((g) => [g.groupId, g.errorCode, g.authorizedOperations])

  it('DescribeGroups (15): DESCRIBE on each GROUP, refused groups first; v3+ authorized operations', async () => {
    const body = { groups: ['az-offsets', 'zz-hidden'], includeAuthorizedOperations: true }
    assert.deepEqual(rows(await req<Described>('alice', 15, 5, body)), [
      ['zz-hidden', ErrorCode.GROUP_AUTHORIZATION_FAILED, NOT_REQUESTED],
      ['az-offsets', 0, ALICE_GROUP_OPS],
    ])
    assert.deepEqual(rows(await req<Described>('carol', 15, 5, body)), [
      ['zz-hidden', ErrorCode.GROUP_AUTHORIZATION_FAILED, NOT_REQUESTED],
      ['az-offsets', 0, CAROL_GROUP_OPS],
    ])
    assert.deepEqual(rows(await req<Described>('admin', 15, 5, body)), [
      ['az-offsets', 0, GROUP_ALL],
      ['zz-hidden', 0, GROUP_ALL],
    ])
    assert.deepEqual(rows(await req<Described>('bob', 15, 5, body)), [
      ['az-offsets', ErrorCode.GROUP_AUTHORIZATION_FAILED, NOT_REQUESTED],
      ['zz-hidden', ErrorCode.GROUP_AUTHORIZATION_FAILED, NOT_REQUESTED],
    ])
    const denied = (await req<Described & { groups: { errorMessage: string | null }[] }>('bob', 15, 6, body))
      .groups[0]
    assert.deepEqual([denied.groupState, denied.errorMessage], ['', null])
    // Not asked for: the field stays unset.
    assert.deepEqual(rows(await req<Described>('alice', 15, 5, { groups: ['az-offsets'] })), [
      ['az-offsets', 0, NOT_REQUESTED],
    ])
  })

  it('ListGroups (16): DESCRIBE on the CLUSTER lists every group, otherwise groups with DESCRIBE', async () => {
    const list = async (user: string) =>
      (
        await req<{ errorCode: number; groups: { groupId: string }[] }>(user, 16, 4, { statesFilter: [] })
      ).groups
        .map((g) => g.groupId)
        .filter((g) => g === 'az-offsets' || g === 'zz-hidden')
        .sort()
    assert.deepEqual(await list('dave'), ['az-offsets', 'zz-hidden'])
    assert.deepEqual(await list('admin'), ['az-offsets', 'zz-hidden'])
    assert.deepEqual(await list('alice'), ['az-offsets'])
    assert.deepEqual(await list('carol'), ['az-offsets'])
    const bob = await req<{ errorCode: number; groups: unknown[] }>('bob', 16, 4, { statesFilter: [] })
    assert.deepEqual([bob.errorCode, bob.groups], [0, []])
  })

  it('DeleteGroups (42): DELETE on each GROUP, names de-duplicated, refused groups after the others', async () => {
    await commit('admin', 'az-doomed', [{ name: 'az-in', partitions: [0] }])
    await commit('admin', 'zz-kept', [{ name: 'az-in', partitions: [0] }])
    const del = async (user: string) =>
      (
        await req<{ results: { groupId: string; errorCode: number }[] }>(user, 42, 2, {
          groupsNames: ['zz-kept', 'az-doomed', 'zz-kept', 'az-doomed'],
        })
      ).results.map((r) => [r.groupId, r.errorCode])
    assert.deepEqual(await del('carol'), [
      ['zz-kept', ErrorCode.GROUP_AUTHORIZATION_FAILED],
      ['az-doomed', ErrorCode.GROUP_AUTHORIZATION_FAILED],
    ])
    assert.deepEqual(await del('alice'), [
      ['az-doomed', 0],
      ['zz-kept', ErrorCode.GROUP_AUTHORIZATION_FAILED],
    ])
    assert.deepEqual(await del('alice'), [
      ['az-doomed', ErrorCode.GROUP_ID_NOT_FOUND],
      ['zz-kept', ErrorCode.GROUP_AUTHORIZATION_FAILED],
    ])
    const kept = await req<Described>('admin', 15, 5, { groups: ['zz-kept'] })
    assert.equal(kept.groups[0].groupState, 'Empty')
  })
})

describe('consumer group APIs', { timeout: 60_000 }, () => {
  it('ConsumerGroupHeartbeat (68): READ on the GROUP, DESCRIBE on the topics, refusals without a message', async () => {
    const hb = (user: string, groupId: string, topics = ['az-in']) =>
      req<{ errorCode: number; errorMessage: string | null; memberEpoch: number }>(user, 68, 0, {
        groupId,
        memberId: `m-${user}`,
        memberEpoch: 0,
        rebalanceTimeoutMs: 5000,
        subscribedTopicNames: topics,
        topicPartitions: [],
      })
    for (const user of ['bob', 'carol']) {
      const denied = await hb(user, 'az-consumer')
      assert.deepEqual(
        [denied.errorCode, denied.errorMessage],
        [ErrorCode.GROUP_AUTHORIZATION_FAILED, null],
        user,
      )
    }
    const secret = await hb('alice', 'az-consumer', ['az-in', 'az-secret'])
    assert.deepEqual([secret.errorCode, secret.errorMessage], [ErrorCode.TOPIC_AUTHORIZATION_FAILED, null])
    // Past the checks, the member joins.
    const allowed = await hb('alice', 'az-consumer')
    assert.deepEqual([allowed.errorCode, allowed.memberEpoch], [ErrorCode.NONE, 1])
    // carol may describe the group but not its topic: the group is hidden, as Kafka does.
    const seen = await req<{
      groups: { errorCode: number; errorMessage: string | null; members: unknown[] }[]
    }>('carol', 69, 0, { groupIds: ['az-consumer'] })
    assert.deepEqual(
      [seen.groups[0]!.errorCode, seen.groups[0]!.errorMessage, seen.groups[0]!.members],
      [
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        'The group has described topic(s) that the client is not authorized to describe.',
        [],
      ],
    )
    const leave = await req<{ errorCode: number }>('alice', 68, 0, {
      groupId: 'az-consumer',
      memberId: 'm-alice',
      memberEpoch: -1,
    })
    assert.equal(leave.errorCode, ErrorCode.NONE)
  })

  it('ConsumerGroupHeartbeat (68): a pattern subscribes only to the topics the member may DESCRIBE', async () => {
    // alice may describe az-in (READ implies DESCRIBE) but not az-secret; both match the pattern.
    const joined = await req<{
      errorCode: number
      memberEpoch: number
      assignment: { topicPartitions: { topicId: string; partitions: number[] }[] } | null
    }>('alice', 68, 1, {
      groupId: 'az-pattern',
      memberId: 'm-alice-pattern',
      memberEpoch: 0,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: 5000,
      subscribedTopicNames: null,
      subscribedTopicRegex: 'az-(in|secret)',
      serverAssignor: null,
      topicPartitions: [],
    })
    assert.equal(joined.errorCode, ErrorCode.NONE)
    const described = await req<{
      groups: {
        members: { assignment: { topicPartitions: { topicName: string; partitions: number[] }[] } }[]
      }[]
    }>('admin', 69, 1, { groupIds: ['az-pattern'], includeAuthorizedOperations: false })
    assert.deepEqual(
      described.groups[0]!.members[0]!.assignment.topicPartitions.map((t) => [t.topicName, t.partitions]),
      [['az-in', [0, 1]]],
    )
    assert.equal(joined.assignment?.topicPartitions.length, 1)
    const leave = await req<{ errorCode: number }>('alice', 68, 0, {
      groupId: 'az-pattern',
      memberId: 'm-alice-pattern',
      memberEpoch: -1,
    })
    assert.equal(leave.errorCode, ErrorCode.NONE)
  })

  it('ConsumerGroupDescribe (69): DESCRIBE on each GROUP, refused groups first', async () => {
    const d = async (user: string) =>
      (
        await req<{
          groups: {
            groupId: string
            errorCode: number
            errorMessage: string | null
            authorizedOperations: number
          }[]
        }>(user, 69, 0, { groupIds: ['az-offsets', 'zz-hidden'], includeAuthorizedOperations: true })
      ).groups.map((g) => [g.groupId, g.errorCode, g.authorizedOperations])
    assert.deepEqual(await d('carol'), [
      ['zz-hidden', ErrorCode.GROUP_AUTHORIZATION_FAILED, NOT_REQUESTED],
      ['az-offsets', ErrorCode.GROUP_ID_NOT_FOUND, NOT_REQUESTED],
    ])
    assert.deepEqual(await d('bob'), [
      ['az-offsets', ErrorCode.GROUP_AUTHORIZATION_FAILED, NOT_REQUESTED],
      ['zz-hidden', ErrorCode.GROUP_AUTHORIZATION_FAILED, NOT_REQUESTED],
    ])
  })
})

describe('streams group APIs', { timeout: 60_000 }, () => {
  let aliceMember = ''

  it('StreamsGroupHeartbeat (88): READ on the GROUP and DESCRIBE on the topology topics, no messages', async () => {
    for (const user of ['bob', 'carol']) {
      const denied = await streamsJoin(user, 'az-streams', `${user}-m`)
      assert.deepEqual(
        [denied.errorCode, denied.errorMessage, denied.memberId],
        [ErrorCode.GROUP_AUTHORIZATION_FAILED, null, ''],
        user,
      )
    }
    // alice may not describe az-secret.
    const secret = await streamsJoin('alice', 'az-streams-x', 'a-x', simpleTopology(['az-in', 'az-secret']))
    assert.deepEqual([secret.errorCode, secret.errorMessage], [ErrorCode.TOPIC_AUTHORIZATION_FAILED, null])
    // Kafka's topic-name checks come first.
    const internal = await streamsJoin(
      'alice',
      'az-streams-x',
      'a-x',
      simpleTopology(['__consumer_offsets', 'az-secret']),
    )
    assert.deepEqual(
      [internal.errorCode, internal.errorMessage],
      [
        ErrorCode.STREAMS_INVALID_TOPOLOGY,
        'Use of Kafka internal topics __consumer_offsets in a Kafka Streams topology is prohibited.',
      ],
    )
    assert.equal(
      await streamsGroupExists('az-streams-x'),
      false,
      'no group was created by a refused heartbeat',
    )
  })

  it('StreamsGroupHeartbeat (88): without CREATE the internal topics are reported, not created', async () => {
    const joined = await streamsJoin('alice', 'az-streams', 'alice-m')
    assert.equal(joined.errorCode, 0)
    aliceMember = joined.memberId
    assert.deepEqual(joined.status, [
      {
        statusCode: 3,
        statusDetail:
          'Internal topics are missing: az-streams-store-changelog; Unauthorized to CREATE on topics az-streams-store-changelog.',
      },
    ])
    const again = await streamsJoin('alice', 'az-streams', 'alice-m', undefined, joined.memberEpoch)
    assert.equal(again.errorCode, 0)
    assert.deepEqual(
      again.status?.map((s) => s.statusDetail),
      [
        'Internal topics are missing: az-streams-store-changelog; Unauthorized to CREATE on topics az-streams-store-changelog.',
      ],
    )
    await new Promise((r) => setTimeout(r, 200))
    assert.equal(topicExists(), false)

    // With CREATE on the topic, the next heartbeat creates it.
    await allow('alice', TOPIC, 'az-streams-store-changelog', op.CREATE)
    const allowed = await streamsJoin('alice', 'az-streams', 'alice-m', undefined, again.memberEpoch)
    assert.equal(allowed.errorCode, 0)
    assert.deepEqual(
      allowed.status?.map((s) => s.statusDetail),
      ['Internal topics are missing: az-streams-store-changelog'],
    )
    await waitFor('the changelog topic', topicExists)
  })

  it('StreamsGroupDescribe (89): DESCRIBE on each GROUP, refused groups first, authorized operations', async () => {
    type Row = {
      groupId: string
      errorCode: number
      errorMessage: string | null
      members: unknown[]
      topology: unknown
      authorizedOperations: number
      topologyDescription: unknown
      topologyDescriptionStatus: number
    }
    const d = async (user: string, groupIds: string[], includeAuthorizedOperations = true) =>
      (
        await req<{ groups: Row[] }>(user, 89, 1, {
          groupIds,
          includeAuthorizedOperations,
          includeTopologyDescription: true,
        })
      ).groups
    const alice = await d('alice', ['zz-hidden', 'az-streams'])
    assert.deepEqual(
      alice.map((g) => [g.groupId, g.errorCode, g.authorizedOperations]),
      [
        ['zz-hidden', ErrorCode.GROUP_AUTHORIZATION_FAILED, NOT_REQUESTED],
        ['az-streams', 0, ALICE_GROUP_OPS],
      ],
    )
    assert.equal(alice[1].members.length, 1)
    // carol may describe the group but none of its topics: the topic filter replaces the row.
    assert.deepEqual(
      (await d('carol', ['az-streams'])).map((g) => [g.errorCode, g.errorMessage, g.authorizedOperations]),
      [[ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_FILTER_MESSAGE, NOT_REQUESTED]],
    )
    assert.deepEqual(
      (await d('admin', ['az-streams'])).map((g) => [g.errorCode, g.authorizedOperations]),
      [[0, GROUP_ALL]],
    )
    assert.deepEqual(
      (await d('bob', ['az-streams'])).map((g) => [g.errorCode, g.errorMessage, g.topology]),
      [[ErrorCode.GROUP_AUTHORIZATION_FAILED, null, null]],
    )
    assert.deepEqual(
      (await d('alice', ['az-streams'], false)).map((g) => g.authorizedOperations),
      [NOT_REQUESTED],
    )

    // A group whose topology names a topic alice may not describe (created by the super user).
    const secret = await streamsJoin(
      'admin',
      'az-secret-streams',
      'admin-m',
      simpleTopology(['az-in', 'az-secret']),
    )
    assert.equal(secret.errorCode, 0)
    const filtered = await d('alice', ['az-secret-streams'])
    assert.deepEqual(filtered, [
      {
        ...filtered[0],
        groupId: 'az-secret-streams',
        errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        errorMessage: TOPIC_FILTER_MESSAGE,
        members: [],
        topology: null,
        authorizedOperations: NOT_REQUESTED,
        topologyDescription: null,
        topologyDescriptionStatus: 0,
      },
    ])
    const seen = await d('admin', ['az-secret-streams'])
    assert.deepEqual([seen[0].errorCode, seen[0].members.length], [0, 1])
  })

  it('StreamsGroupTopologyDescriptionUpdate (93): READ on the GROUP; refused pushes never reach the plugin', async () => {
    const push = (user: string) =>
      req<{ errorCode: number; errorMessage: string | null }>(user, 93, 0, {
        groupId: 'az-streams',
        memberId: aliceMember,
        topologyEpoch: 0,
        topologyDescription: wireDescription('az-in'),
      })
    const before = pluginCalls('az-streams').length
    for (const user of ['bob', 'carol']) {
      const denied = await push(user)
      assert.deepEqual(
        [denied.errorCode, denied.errorMessage],
        [ErrorCode.GROUP_AUTHORIZATION_FAILED, null],
        user,
      )
    }
    assert.equal(pluginCalls('az-streams').length, before, 'the plugin was not called')
    const pushed = await push('alice')
    assert.deepEqual([pushed.errorCode, pushed.errorMessage], [0, null])
    assert.deepEqual(
      pluginCalls('az-streams')
        .slice(before)
        .map((c) => c.op),
      ['set'],
    )
  })
})

async function streamsGroupExists(groupId: string): Promise<boolean> {
  const r = await req<{ groups: { errorCode: number }[] }>('admin', 89, 0, {
    groupIds: [groupId],
    includeAuthorizedOperations: false,
  })
  return r.groups[0].errorCode === 0
}
