// DescribeConfigs (32) and IncrementalAlterConfigs (44) over TCP against an in-process server: GROUP,
// TOPIC and BROKER resources, every validation and error row Kafka answers, authorization with an
// injected authorizer, and group configs kept across a restart on SQLite storage.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import type { DescribeConfigsResponse } from '../../src/protocol/generated/messages/DescribeConfigsResponse.js'
import type { IncrementalAlterConfigsResponse } from '../../src/protocol/generated/messages/IncrementalAlterConfigsResponse.js'
import type { Authorizer } from '../../src/server/router.js'
import { startTestServer, type TestServer, tempDataDir } from './harness.js'
import { WireClient } from './wire-client.js'

const TOPIC = 2
const BROKER = 4
const BROKER_LOGGER = 8
const CLIENT_METRICS = 16
const GROUP = 32
const SET = 0
const DELETE = 1
const APPEND = 2
const SUBTRACT = 3

/** Denies by name: groups and topics starting with `denied`; the cluster while `denyCluster`. */
let denyCluster = false
const calls: string[] = []
const authorizer: Authorizer = {
  authorize(_principal, operation, type, name) {
    calls.push(`${operation}:${type}:${name}`)
    if (type === 'CLUSTER') return !denyCluster
    return !name.startsWith('denied')
  },
}

let ts: TestServer
let c: WireClient

before(async () => {
  ts = await startTestServer(
    {
      'group.streams.session.timeout.ms': '50000',
      'ssl.key.password': 'secret',
      'topology.description.postgres.url': 'postgres://user:pw@db/x',
    },
    { authorizer },
  )
  c = await WireClient.connect(ts.port)
  const created = await c.request<{ topics: { errorCode: number }[] }>(19, 7, {
    topics: [
      {
        name: 'orders',
        numPartitions: 2,
        replicationFactor: 1,
        assignments: [],
        configs: [
          { name: 'retention.ms', value: '1000' },
          { name: 'cleanup.policy', value: 'compact' },
        ],
      },
    ],
    timeoutMs: 1000,
  })
  assert.equal(created.body.topics[0].errorCode, 0)
})

after(async () => {
  c?.close()
  await ts?.stop()
})

interface Resource {
  readonly resourceType: number
  readonly resourceName: string
  readonly configurationKeys?: string[] | null
}

async function describeConfigs(
  resources: Resource[],
  opts: { includeSynonyms?: boolean; includeDocumentation?: boolean; version?: number } = {},
) {
  const { body } = await c.request<DescribeConfigsResponse>(32, opts.version ?? 4, {
    resources: resources.map((r) => ({ configurationKeys: null, ...r })),
    includeSynonyms: opts.includeSynonyms ?? false,
    includeDocumentation: opts.includeDocumentation ?? false,
  })
  return body.results
}

type Op = [name: string, op: number, value: string | null]

async function alter(
  resources: { resourceType: number; resourceName: string; configs: Op[] }[],
  validateOnly = false,
  version = 1,
) {
  const { body } = await c.request<IncrementalAlterConfigsResponse>(44, version, {
    resources: resources.map((r) => ({
      resourceType: r.resourceType,
      resourceName: r.resourceName,
      configs: r.configs.map(([name, configOperation, value]) => ({ name, configOperation, value })),
    })),
    validateOnly,
  })
  return body.responses.map((r) => [r.resourceType, r.resourceName, r.errorCode, r.errorMessage])
}

const groupAlter = (name: string, ...configs: Op[]) => ({ resourceType: GROUP, resourceName: name, configs })

async function groupValue(groupId: string, key: string) {
  const [r] = await describeConfigs([
    { resourceType: GROUP, resourceName: groupId, configurationKeys: [key] },
  ])
  assert.equal(r.errorCode, 0)
  return { value: r.configs[0].value, source: r.configs[0].configSource }
}

describe('DescribeConfigs', () => {
  it('a group: every GroupConfig key with its value, source, type; synonyms and documentation on request', async () => {
    const [plain] = await describeConfigs([{ resourceType: GROUP, resourceName: 'fresh' }])
    assert.equal(plain.errorCode, 0)
    assert.equal(plain.errorMessage, null)
    assert.equal(plain.configs.length, 27)
    assert.ok(plain.configs.every((e) => e.synonyms.length === 0 && e.documentation === null))
    assert.ok(plain.configs.every((e) => !e.readOnly && !e.isSensitive))
    const byName = new Map(plain.configs.map((e) => [e.name, e]))
    assert.deepEqual(
      [
        'streams.session.timeout.ms',
        'streams.heartbeat.interval.ms',
        'streams.assignor.name',
        'streams.acceptable.recovery.lag',
      ].map((k) => {
        const e = byName.get(k)!
        return [k, e.value, e.configSource, e.configType]
      }),
      [
        ['streams.session.timeout.ms', '50000', 4, 3],
        ['streams.heartbeat.interval.ms', '5000', 5, 3],
        ['streams.assignor.name', 'sticky', 5, 2],
        ['streams.acceptable.recovery.lag', '10000', 5, 5],
      ],
    )
    const [full] = await describeConfigs(
      [{ resourceType: GROUP, resourceName: 'fresh', configurationKeys: ['streams.session.timeout.ms'] }],
      { includeSynonyms: true, includeDocumentation: true },
    )
    assert.deepEqual(full.configs, [
      {
        name: 'streams.session.timeout.ms',
        value: '50000',
        readOnly: false,
        configSource: 4,
        isSensitive: false,
        synonyms: [
          { name: 'group.streams.session.timeout.ms', value: '50000', source: 4 },
          { name: 'group.streams.session.timeout.ms', value: '45000', source: 5 },
        ],
        configType: 3,
        documentation:
          'How long a streams group member may go without a heartbeat before it is removed from the group.',
      },
    ])
  })

  it('ConfigurationKeys filters (unknown keys are left out; an empty list is every key); v1 has no type or documentation', async () => {
    const [some] = await describeConfigs([
      { resourceType: GROUP, resourceName: 'g', configurationKeys: ['streams.num.standby.replicas', 'nope'] },
    ])
    assert.deepEqual(
      some.configs.map((e) => e.name),
      ['streams.num.standby.replicas'],
    )
    const [all] = await describeConfigs([{ resourceType: GROUP, resourceName: 'g', configurationKeys: [] }])
    assert.equal(all.configs.length, 27)
    const [v1] = await describeConfigs(
      [{ resourceType: GROUP, resourceName: 'g', configurationKeys: ['streams.num.standby.replicas'] }],
      { version: 1, includeSynonyms: true },
    )
    const { documentation: _unsent, ...v1Entry } = v1.configs[0]
    assert.deepEqual(v1Entry, {
      name: 'streams.num.standby.replicas',
      value: '0',
      readOnly: false,
      configSource: 5,
      isSensitive: false,
      synonyms: [{ name: 'group.streams.num.standby.replicas', value: '0', source: 5 }],
      configType: 0,
    })
  })

  it('an empty group name is INVALID_REQUEST', async () => {
    const [r] = await describeConfigs([{ resourceType: GROUP, resourceName: '' }])
    assert.deepEqual(
      [r.errorCode, r.errorMessage, r.configs],
      [ErrorCode.INVALID_REQUEST, 'Group name must not be empty', []],
    )
  })

  it('a topic: its own values as TOPIC_CONFIG, the rest defaults with the broker synonym', async () => {
    const [r] = await describeConfigs(
      [
        {
          resourceType: TOPIC,
          resourceName: 'orders',
          configurationKeys: [
            'retention.ms',
            'cleanup.policy',
            'segment.ms',
            'remote.storage.enable',
            'min.insync.replicas',
          ],
        },
      ],
      { includeSynonyms: true },
    )
    assert.equal(r.errorCode, 0)
    assert.deepEqual(
      r.configs.map((e) => [
        e.name,
        e.value,
        e.configSource,
        e.configType,
        e.synonyms.map((s) => [s.name, s.value, s.source]),
      ]),
      [
        [
          'cleanup.policy',
          'compact',
          1,
          7,
          [
            ['cleanup.policy', 'compact', 1],
            ['log.cleanup.policy', 'delete', 5],
          ],
        ],
        ['min.insync.replicas', '1', 5, 3, [['min.insync.replicas', '1', 5]]],
        ['remote.storage.enable', 'false', 5, 1, []],
        [
          'retention.ms',
          '1000',
          1,
          5,
          [
            ['retention.ms', '1000', 1],
            ['log.retention.hours', '168', 5],
          ],
        ],
        ['segment.ms', '604800000', 5, 5, [['log.roll.hours', '168', 5]]],
      ],
    )
    const [all] = await describeConfigs([{ resourceType: TOPIC, resourceName: 'orders' }], {
      includeDocumentation: true,
    })
    assert.equal(all.configs.length, 36)
    assert.ok(all.configs.every((e) => typeof e.documentation === 'string' && e.documentation.length > 0))
  })

  it('a missing topic is UNKNOWN_TOPIC_OR_PARTITION, an invalid name INVALID_TOPIC_EXCEPTION', async () => {
    const results = await describeConfigs([
      { resourceType: TOPIC, resourceName: 'ghost' },
      { resourceType: TOPIC, resourceName: 'bad name' },
    ])
    assert.deepEqual(
      results.map((r) => [r.resourceName, r.errorCode, r.errorMessage]),
      [
        ['ghost', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, null],
        [
          'bad name',
          ErrorCode.INVALID_TOPIC_EXCEPTION,
          "Topic name is invalid: 'bad name' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'",
        ],
      ],
    )
  })

  it('this broker: its static configuration, secrets and unknown keys withheld; the default resource is empty', async () => {
    const [r] = await describeConfigs(
      [
        {
          resourceType: BROKER,
          resourceName: '1',
          configurationKeys: [
            'node.id',
            'min.insync.replicas',
            'group.streams.session.timeout.ms',
            'ssl.key.password',
            'topology.description.postgres.url',
          ],
        },
      ],
      { includeSynonyms: true, includeDocumentation: true },
    )
    assert.equal(r.errorCode, 0)
    assert.deepEqual(
      r.configs.map((e) => [
        e.name,
        e.value,
        e.configSource,
        e.readOnly,
        e.isSensitive,
        e.configType,
        e.synonyms.length,
      ]),
      [
        ['group.streams.session.timeout.ms', '50000', 4, true, false, 3, 2],
        ['min.insync.replicas', '1', 5, true, false, 3, 1],
        ['node.id', '1', 5, true, false, 3, 1],
        ['ssl.key.password', null, 4, true, true, 9, 2],
        ['topology.description.postgres.url', null, 4, true, true, 0, 1],
      ],
    )
    assert.deepEqual(r.configs[3].synonyms, [
      { name: 'ssl.key.password', value: null, source: 4 },
      { name: 'ssl.key.password', value: null, source: 5 },
    ])
    const [cluster] = await describeConfigs([{ resourceType: BROKER, resourceName: '' }])
    assert.deepEqual([cluster.errorCode, cluster.configs], [0, []])
  })

  it('another broker id or a name that is not a number is INVALID_REQUEST', async () => {
    const results = await describeConfigs([
      { resourceType: BROKER, resourceName: '2' },
      { resourceType: BROKER, resourceName: 'one' },
    ])
    assert.deepEqual(
      results.map((r) => [r.errorCode, r.errorMessage]),
      [
        [ErrorCode.INVALID_REQUEST, 'Unexpected broker id, expected 1 or empty string, but received 2'],
        [ErrorCode.INVALID_REQUEST, 'Broker id must be an integer, but it is: one'],
      ],
    )
  })

  it('broker loggers and client metrics are not served', async () => {
    const results = await describeConfigs([
      { resourceType: BROKER_LOGGER, resourceName: '1' },
      { resourceType: CLIENT_METRICS, resourceName: 'sub' },
    ])
    assert.deepEqual(
      results.map((r) => [r.errorCode, r.errorMessage]),
      [
        [ErrorCode.INVALID_REQUEST, 'Unsupported resource type: BROKER_LOGGER'],
        [ErrorCode.INVALID_REQUEST, 'Unsupported resource type: CLIENT_METRICS'],
      ],
    )
  })

  it('a resource type Kafka does not know fails every resource of the request', async () => {
    const results = await describeConfigs([
      { resourceType: GROUP, resourceName: 'g' },
      { resourceType: 3, resourceName: 'x' },
    ])
    assert.deepEqual(
      results.map((r) => [r.resourceType, r.errorCode, r.configs.length]),
      [
        [GROUP, ErrorCode.INVALID_REQUEST, 0],
        [3, ErrorCode.INVALID_REQUEST, 0],
      ],
    )
    assert.match(results[0].errorMessage ?? '', /malformed by the client library/)
  })

  it('DESCRIBE_CONFIGS on the group, the topic or the cluster; refused resources come last', async () => {
    calls.length = 0
    denyCluster = true
    try {
      const results = await describeConfigs([
        { resourceType: GROUP, resourceName: 'denied-g' },
        { resourceType: TOPIC, resourceName: 'denied-t' },
        { resourceType: BROKER, resourceName: '1' },
        { resourceType: GROUP, resourceName: 'open', configurationKeys: ['streams.num.standby.replicas'] },
      ])
      assert.deepEqual(
        results.map((r) => [r.resourceName, r.errorCode, r.errorMessage]),
        [
          ['open', 0, null],
          ['denied-g', ErrorCode.GROUP_AUTHORIZATION_FAILED, 'Group authorization failed.'],
          ['denied-t', ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.'],
          ['1', ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.'],
        ],
      )
      assert.deepEqual(calls, [
        'DESCRIBE_CONFIGS:GROUP:denied-g',
        'DESCRIBE_CONFIGS:TOPIC:denied-t',
        'DESCRIBE_CONFIGS:CLUSTER:kafka-cluster',
        'DESCRIBE_CONFIGS:GROUP:open',
      ])
    } finally {
      denyCluster = false
    }
  })
})

describe('IncrementalAlterConfigs on groups', () => {
  it('SET, then DELETE; the value and its source follow', async () => {
    assert.deepEqual(await alter([groupAlter('app', ['streams.num.standby.replicas', SET, '1'])]), [
      [GROUP, 'app', 0, null],
    ])
    assert.deepEqual(await groupValue('app', 'streams.num.standby.replicas'), { value: '1', source: 8 })
    assert.deepEqual(await alter([groupAlter('app', ['streams.num.standby.replicas', DELETE, null])]), [
      [GROUP, 'app', 0, null],
    ])
    assert.deepEqual(await groupValue('app', 'streams.num.standby.replicas'), { value: '0', source: 5 })
  })

  it('ValidateOnly checks and changes nothing; v0 is served too', async () => {
    assert.deepEqual(await alter([groupAlter('vo', ['streams.num.standby.replicas', SET, '2'])], true, 0), [
      [GROUP, 'vo', 0, null],
    ])
    assert.deepEqual(await groupValue('vo', 'streams.num.standby.replicas'), { value: '0', source: 5 })
    assert.deepEqual(await alter([groupAlter('vo', ['streams.num.standby.replicas', SET, '3'])], true), [
      [GROUP, 'vo', ErrorCode.INVALID_CONFIG, 'streams.num.standby.replicas must be less than or equal to 2'],
    ])
  })

  it('Kafka’s validation answers, per resource, the valid ones applied', async () => {
    const rows: [Op[], number, string | null][] = [
      [
        [['streams.heartbeat.interval.ms', SET, '1000']],
        ErrorCode.INVALID_CONFIG,
        'streams.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.',
      ],
      [
        [['streams.session.timeout.ms', SET, '70000']],
        ErrorCode.INVALID_CONFIG,
        'streams.session.timeout.ms must be in the range 45000 to 60000 inclusive.',
      ],
      [
        [['streams.task.offset.interval.ms', SET, '100']],
        ErrorCode.INVALID_CONFIG,
        'streams.task.offset.interval.ms must be greater than or equal to 15000',
      ],
      [
        [['streams.num.warmup.replicas', SET, '50']],
        ErrorCode.INVALID_CONFIG,
        'streams.num.warmup.replicas must be less than or equal to 20',
      ],
      [
        [['streams.assignment.interval.ms', SET, '-1']],
        ErrorCode.INVALID_CONFIG,
        'Invalid value -1 for configuration streams.assignment.interval.ms: Value must be at least 0',
      ],
      [
        [['streams.initial.rebalance.delay.ms', SET, 'soon']],
        ErrorCode.INVALID_CONFIG,
        'Invalid value soon for configuration streams.initial.rebalance.delay.ms: Not a number of type INT',
      ],
      [
        [['streams.rack.aware.assignment.tags', SET, 'zone,zone']],
        ErrorCode.INVALID_CONFIG,
        'streams.rack.aware.assignment.tags must not contain duplicate tag keys.',
      ],
      [
        [['streams.assignor.name', SET, 'balanced']],
        ErrorCode.INVALID_CONFIG,
        "streams.assignor.name 'balanced' is not a registered task assignor. Registered assignors are: [sticky].",
      ],
      [[['streams.foo', SET, '1']], ErrorCode.INVALID_CONFIG, 'Unknown group config name: streams.foo'],
      [
        [['streams.rack.aware.assignment.tags', APPEND, 'zone']],
        ErrorCode.INVALID_CONFIG,
        "Can't APPEND to key streams.rack.aware.assignment.tags because its type is not LIST.",
      ],
      [
        [['streams.rack.aware.assignment.tags', SUBTRACT, 'zone']],
        ErrorCode.INVALID_CONFIG,
        "Can't SUBTRACT to key streams.rack.aware.assignment.tags because its type is not LIST.",
      ],
      [
        [
          ['streams.num.standby.replicas', SET, '1'],
          ['streams.num.standby.replicas', DELETE, null],
        ],
        ErrorCode.INVALID_REQUEST,
        'Error due to duplicate config keys',
      ],
      [
        [
          ['streams.num.standby.replicas', SET, null],
          ['streams.heartbeat.interval.ms', APPEND, null],
        ],
        ErrorCode.INVALID_REQUEST,
        'Null value not supported for : streams.num.standby.replicas, streams.heartbeat.interval.ms',
      ],
      [[['streams.num.standby.replicas', 4, '1']], ErrorCode.INVALID_REQUEST, 'Unknown operations type 4'],
      [
        [
          ['streams.heartbeat.interval.ms', SET, '6000'],
          ['streams.session.timeout.ms', SET, '50000'],
        ],
        ErrorCode.NONE,
        null,
      ],
    ]
    const results = await alter(rows.map(([ops], i) => groupAlter(`v${i}`, ...ops)))
    assert.deepEqual(
      results,
      rows.map(([, code, message], i) => [GROUP, `v${i}`, code, message]),
    )
    assert.deepEqual(await groupValue(`v${rows.length - 1}`, 'streams.session.timeout.ms'), {
      value: '50000',
      source: 8,
    })
    assert.deepEqual(await groupValue('v0', 'streams.heartbeat.interval.ms'), { value: '5000', source: 5 })
  })

  it('the default group resource, a resource named twice, and ALTER_CONFIGS on the group', async () => {
    calls.length = 0
    const results = await alter([
      groupAlter('', ['streams.num.standby.replicas', SET, '1']),
      groupAlter('twice', ['streams.num.standby.replicas', SET, '1']),
      groupAlter('denied-g', ['streams.num.standby.replicas', SET, '1']),
      groupAlter('twice', ['streams.num.standby.replicas', SET, '2']),
    ])
    assert.deepEqual(results, [
      [GROUP, '', ErrorCode.INVALID_REQUEST, 'Default group resources are not allowed.'],
      [GROUP, 'twice', ErrorCode.INVALID_REQUEST, 'Each resource must appear at most once.'],
      [GROUP, 'denied-g', ErrorCode.GROUP_AUTHORIZATION_FAILED, 'Group authorization failed.'],
      [GROUP, 'twice', ErrorCode.INVALID_REQUEST, 'Each resource must appear at most once.'],
    ])
    assert.deepEqual(calls, ['ALTER_CONFIGS:GROUP:', 'ALTER_CONFIGS:GROUP:denied-g'])
    // Validation runs before authorization, as the broker checks before forwarding.
    assert.deepEqual(await alter([groupAlter('denied-g', ['x', SET, '1'], ['x', SET, '2'])]), [
      [GROUP, 'denied-g', ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys'],
    ])
  })

  it('configs survive DeleteGroups, as in Kafka', async () => {
    await alter([groupAlter('deleted', ['streams.heartbeat.interval.ms', SET, '7000'])])
    // A simple group (offsets only) to delete.
    await c.request(8, 9, {
      groupId: 'deleted',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: 'orders',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
          partitions: [
            { partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null },
          ],
        },
      ],
    })
    const { body } = await c.request<{ results: { errorCode: number }[] }>(42, 3, {
      groupsNames: ['deleted'],
    })
    assert.equal(body.results[0].errorCode, 0)
    assert.deepEqual(await groupValue('deleted', 'streams.heartbeat.interval.ms'), {
      value: '7000',
      source: 8,
    })
  })
})

describe('IncrementalAlterConfigs on topics, brokers and other types', () => {
  it('topics: Kafka’s checks, then the change is written (not with ValidateOnly)', async () => {
    const t = (name: string, ...configs: Op[]) => ({ resourceType: TOPIC, resourceName: name, configs })
    const results = await alter([
      t('orders', ['retention.ms', SET, '2000']),
      t('orders', ['retention.ms', APPEND, '1']),
      t('ghost', ['retention.ms', SET, '2000']),
      t('', ['retention.ms', SET, '2000']),
      t('bad name', ['retention.ms', SET, '2000']),
      t('orders2', ['nope', SET, '1']),
      t('orders3', ['retention.ms', SET, 'x']),
      t('denied-t', ['retention.ms', SET, '1']),
    ])
    assert.deepEqual(results, [
      [TOPIC, 'orders', ErrorCode.INVALID_REQUEST, 'Each resource must appear at most once.'],
      [TOPIC, 'orders', ErrorCode.INVALID_REQUEST, 'Each resource must appear at most once.'],
      [TOPIC, 'ghost', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'ghost' does not exist."],
      [TOPIC, '', ErrorCode.INVALID_REQUEST, 'Default topic resources are not allowed.'],
      [
        TOPIC,
        'bad name',
        ErrorCode.INVALID_TOPIC_EXCEPTION,
        "Topic name is invalid: 'bad name' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'",
      ],
      [TOPIC, 'orders2', ErrorCode.INVALID_CONFIG, 'Unknown topic config name: nope'],
      [
        TOPIC,
        'orders3',
        ErrorCode.INVALID_CONFIG,
        'Invalid value x for configuration retention.ms: Not a number of type LONG',
      ],
      [TOPIC, 'denied-t', ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.'],
    ])
    const more = await alter([t('orders', ['retention.ms', APPEND, '1'], ['cleanup.policy', SET, 'delete'])])
    assert.deepEqual(more, [
      [
        TOPIC,
        'orders',
        ErrorCode.INVALID_CONFIG,
        "Can't APPEND to key retention.ms because its type is not LIST.",
      ],
    ])
    assert.deepEqual(await alter([t('orders', ['cleanup.policy', APPEND, 'delete'])], true), [
      [TOPIC, 'orders', 0, null],
    ])
    assert.deepEqual(await alter([t('orders', ['retention.ms', SET, '-2'])]), [
      [
        TOPIC,
        'orders',
        ErrorCode.INVALID_CONFIG,
        'Invalid value -2 for configuration retention.ms: Value must be at least -1',
      ],
    ])
    assert.deepEqual(
      await alter([t('orders', ['min.compaction.lag.ms', SET, '10'], ['max.compaction.lag.ms', SET, '5'])]),
      [
        [
          TOPIC,
          'orders',
          ErrorCode.INVALID_CONFIG,
          'conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)',
        ],
      ],
    )
    assert.deepEqual(
      await alter([t('orders', ['retention.ms', SET, '1000'], ['segment.ms', DELETE, null])]),
      [[TOPIC, 'orders', 0, null]],
    )
    const [after] = await describeConfigs([
      { resourceType: TOPIC, resourceName: 'orders', configurationKeys: ['cleanup.policy', 'retention.ms'] },
    ])
    assert.deepEqual(
      after.configs.map((c: { name: string; value: string | null }) => [c.name, c.value]),
      [
        ['cleanup.policy', 'compact'],
        ['retention.ms', '1000'],
      ],
      'the ValidateOnly change left cleanup.policy alone; retention.ms was written',
    )
  })

  it('brokers: nothing is dynamic, so every key a change would set is refused; deletions succeed', async () => {
    const b = (name: string, ...configs: Op[]) => ({ resourceType: BROKER, resourceName: name, configs })
    calls.length = 0
    assert.deepEqual(
      await alter([
        b('1', ['log.level', SET, 'debug'], ['node.id', SET, '2'], ['node.id', DELETE, null]),
        b('', ['group.streams.session.timeout.ms', SET, '50000']),
      ]),
      [
        [BROKER, '1', ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys'],
        [
          BROKER,
          '',
          ErrorCode.INVALID_REQUEST,
          'Cannot update these configs dynamically: [group.streams.session.timeout.ms]',
        ],
      ],
    )
    assert.deepEqual(
      await alter([
        b('1', ['log.level', SET, 'debug'], ['listeners', APPEND, 'X://h:1']),
        b('2', ['log.level', DELETE, null]),
        b('x', ['log.level', DELETE, null]),
        b('', ['nope', APPEND, 'a']),
      ]),
      [
        [
          BROKER,
          '1',
          ErrorCode.INVALID_REQUEST,
          'Cannot update these configs dynamically: [log.level, listeners]',
        ],
        [BROKER, '2', ErrorCode.INVALID_REQUEST, 'Unexpected broker id, expected 1, but received 2'],
        [BROKER, 'x', ErrorCode.INVALID_REQUEST, 'Node id must be an integer, but it is: x'],
        [BROKER, '', ErrorCode.INVALID_CONFIG, 'Unknown config name: nope'],
      ],
    )
    assert.deepEqual(await alter([b('', ['log.level', SUBTRACT, 'info'])]), [
      [
        BROKER,
        '',
        ErrorCode.INVALID_CONFIG,
        'Config value subtract is not allowed for config key: log.level',
      ],
    ])
    assert.deepEqual(await alter([b('1', ['log.level', DELETE, null], ['node.id', 9, '1'])]), [
      [BROKER, '1', ErrorCode.INVALID_REQUEST, 'Unknown operations type 9'],
    ])
    assert.deepEqual(calls, [], 'refused before authorization')
    assert.deepEqual(await alter([b('1', ['log.level', DELETE, null])]), [[BROKER, '1', 0, null]])
    denyCluster = true
    try {
      assert.deepEqual(await alter([b('1', ['log.level', DELETE, null])]), [
        [BROKER, '1', ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'Cluster authorization failed.'],
      ])
    } finally {
      denyCluster = false
    }
  })

  it('broker loggers, client metrics and unknown types: Unknown resource type', async () => {
    assert.deepEqual(
      await alter([
        { resourceType: BROKER_LOGGER, resourceName: '1', configs: [['root', SET, 'DEBUG']] },
        { resourceType: CLIENT_METRICS, resourceName: 'm', configs: [['interval.ms', SET, '1000']] },
        { resourceType: 99, resourceName: 'x', configs: [] },
      ]),
      [
        [BROKER_LOGGER, '1', ErrorCode.INVALID_REQUEST, 'Unknown resource type 8'],
        [CLIENT_METRICS, 'm', ErrorCode.INVALID_REQUEST, 'Unknown resource type 16'],
        [99, 'x', ErrorCode.INVALID_REQUEST, 'Unknown resource type 99'],
      ],
    )
  })
})

describe('group configs are durable', () => {
  it('their log id lies above every shard: offsets.topic.num.partitions must stay below it', async () => {
    const dataDir = tempDataDir()
    try {
      await assert.rejects(
        startTestServer({ 'offsets.topic.num.partitions': '2147483645' }, {}, dataDir),
        /offsets.topic.num.partitions must be below 2147483645/,
      )
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('survive a restart on SQLite storage, and apply to the group afterwards', async () => {
    const dataDir = tempDataDir()
    const first = await startTestServer({ 'coordinator.storage': 'sqlite' }, {}, dataDir)
    let client = await WireClient.connect(first.port)
    const set = await client.request<IncrementalAlterConfigsResponse>(44, 1, {
      resources: [
        {
          resourceType: GROUP,
          resourceName: 'kept',
          configs: [
            { name: 'streams.heartbeat.interval.ms', configOperation: SET, value: '6000' },
            { name: 'streams.num.standby.replicas', configOperation: SET, value: '1' },
          ],
        },
        {
          resourceType: GROUP,
          resourceName: 'dropped',
          configs: [{ name: 'streams.num.standby.replicas', configOperation: SET, value: '1' }],
        },
      ],
      validateOnly: false,
    })
    assert.deepEqual(
      set.body.responses.map((r) => r.errorCode),
      [0, 0],
    )
    await client.request(44, 1, {
      resources: [
        {
          resourceType: GROUP,
          resourceName: 'dropped',
          configs: [{ name: 'streams.num.standby.replicas', configOperation: DELETE, value: null }],
        },
      ],
      validateOnly: false,
    })
    client.close()
    await first.stop(true)

    const second = await startTestServer({ 'coordinator.storage': 'sqlite' }, {}, dataDir)
    client = await WireClient.connect(second.port)
    try {
      const { body } = await client.request<DescribeConfigsResponse>(32, 4, {
        resources: [
          {
            resourceType: GROUP,
            resourceName: 'kept',
            configurationKeys: ['streams.heartbeat.interval.ms', 'streams.num.standby.replicas'],
          },
          {
            resourceType: GROUP,
            resourceName: 'dropped',
            configurationKeys: ['streams.num.standby.replicas'],
          },
        ],
        includeSynonyms: false,
        includeDocumentation: false,
      })
      assert.deepEqual(
        body.results.map((r) => r.configs.map((e) => [r.resourceName, e.name, e.value, e.configSource])),
        [
          [
            ['kept', 'streams.heartbeat.interval.ms', '6000', 8],
            ['kept', 'streams.num.standby.replicas', '1', 8],
          ],
          [['dropped', 'streams.num.standby.replicas', '0', 5]],
        ],
      )
      const coordinator = second.server.context.coordinator as {
        groupConfigs: { streamsConfig(g: string): { heartbeatIntervalMs: number } }
      }
      assert.equal(coordinator.groupConfigs.streamsConfig('kept').heartbeatIntervalMs, 6000)
    } finally {
      client.close()
      await second.stop()
    }
  })
})
