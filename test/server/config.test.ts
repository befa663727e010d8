import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { describe, it } from 'node:test'
import {
  CONFIG_DEFS,
  ConfigError,
  type ConfigKeyDef,
  parseConfig,
  parseEndpoint,
  parseWithDefs,
  renderConfigTable,
} from '../../src/server/config.js'

function configError(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected ConfigError, got ${String(e)}`)
    return e
  }
  assert.fail('expected a ConfigError')
}

describe('parseConfig defaults', () => {
  it('gives Kafka defaults for every key when nothing is supplied', () => {
    const c = parseConfig({})
    assert.deepEqual(c.listeners, [{ listenerName: 'PLAINTEXT', host: 'localhost', port: 9092 }])
    assert.deepEqual(c.advertisedListeners, c.listeners)
    assert.equal(c.nodeId, 1)
    assert.equal(c.dataDir, './data')
    assert.equal(c.coordinatorStorage, 'sqlite')
    assert.equal(c.offsetsTopicNumPartitions, 50)
    assert.equal(c.offsetsTopicSegmentBytes, 104857600)
    assert.equal(c.transactionStateLogSegmentBytes, 104857600)
    assert.equal(c.shareCoordinatorStateTopicNumPartitions, 50)
    assert.equal(c.shareCoordinatorStateTopicSegmentBytes, 104857600)
    assert.equal(c.offsetsRetentionMinutes, 10080)
    assert.equal(c.offsetsRetentionCheckIntervalMs, 600000)
    assert.equal(c.offsetsCommitTimeoutMs, 5000)
    assert.equal(c.socketRequestMaxBytes, 104857600)
    assert.equal(c.connectionsMaxIdleMs, 600000)
    assert.equal(c.queuedMaxRequests, 500)
    assert.equal(c.logLevel, 'info')
    assert.deepEqual(c.groupCoordinatorRebalanceProtocols, ['classic', 'consumer', 'streams'])
    assert.equal(c.groupMinSessionTimeoutMs, 6000)
    assert.equal(c.groupMaxSessionTimeoutMs, 1800000)
    assert.equal(c.groupInitialRebalanceDelayMs, 3000)
    assert.equal(c.groupMaxSize, 2147483647)
    assert.equal(c.groupStreamsSessionTimeoutMs, 45000)
    assert.equal(c.groupStreamsMinSessionTimeoutMs, 45000)
    assert.equal(c.groupStreamsMaxSessionTimeoutMs, 60000)
    assert.equal(c.groupStreamsHeartbeatIntervalMs, 5000)
    assert.equal(c.groupStreamsMinHeartbeatIntervalMs, 5000)
    assert.equal(c.groupStreamsMaxHeartbeatIntervalMs, 15000)
    assert.equal(c.groupStreamsMaxSize, 2147483647)
    assert.equal(c.groupStreamsNumStandbyReplicas, 0)
    assert.equal(c.groupStreamsMaxStandbyReplicas, 2)
    assert.equal(c.groupStreamsInitialRebalanceDelayMs, 3000)
    assert.equal(c.groupStreamsAssignmentIntervalMs, 1000)
    assert.equal(c.groupStreamsMinAssignmentIntervalMs, 0)
    assert.equal(c.groupStreamsMaxAssignmentIntervalMs, 15000)
    assert.deepEqual(c.groupStreamsAssignors, ['sticky'])
    assert.equal(c.groupStreamsAssignorOffloadEnable, true)
    assert.equal(c.groupStreamsTaskOffsetIntervalMs, 60000)
    assert.equal(c.groupStreamsMinTaskOffsetIntervalMs, 15000)
    assert.equal(c.groupStreamsNumWarmupReplicas, 2)
    assert.equal(c.groupStreamsMaxWarmupReplicas, 20)
    assert.deepEqual(c.groupStreamsRackAwareAssignmentTags, [])
    assert.equal(c.groupStreamsAcceptableRecoveryLag, 10000)
    assert.equal(c.groupStreamsTopologyDescriptionPluginClass, null)
    assert.equal(c.groupStreamsTopologyDescriptionPluginTimeoutMs, null)
    assert.deepEqual(c.consoleListener, { host: 'localhost', port: 8080 })
    assert.equal(c.listenerSecurityProtocolMap.get('PLAINTEXT'), 'PLAINTEXT')
    assert.equal(c.listenerSecurityProtocolMap.get('SASL_SSL'), 'SASL_SSL')
    assert.deepEqual(c.raw, {})
    assert.deepEqual(c.unknownKeys, [])
  })

  it('has a camelCase property for every key of the table', () => {
    const c = parseConfig({}) as unknown as Record<string, unknown>
    for (const d of CONFIG_DEFS) {
      const prop = d.name.replace(/\.([a-z0-9])/g, (_, ch: string) => ch.toUpperCase())
      assert.ok(prop in c, `${d.name} → ${prop}`)
    }
  })

  it('returns a frozen object', () => {
    const c = parseConfig({ 'node.id': '3' })
    assert.ok(Object.isFrozen(c))
    assert.ok(Object.isFrozen(c.raw))
  })
})

describe('parseConfig values', () => {
  it('parses supplied values with their types, trimming surrounding white space', () => {
    const c = parseConfig({
      'node.id': ' 7 ',
      'group.streams.assignor.offload.enable': 'FALSE',
      'group.streams.rack.aware.assignment.tags': ' zone , rack ',
      'group.streams.acceptable.recovery.lag': '9007199254740991',
      'group.streams.topology.description.plugin.class': './my-plugin.js#MyPlugin',
      'group.streams.topology.description.plugin.timeout.ms': '2500',
      'console.listener': 'none',
      'coordinator.storage': 'postgres://u@db/topograph',
      'log.level': 'debug',
    })
    assert.equal(c.nodeId, 7)
    assert.equal(c.groupStreamsAssignorOffloadEnable, false)
    assert.deepEqual(c.groupStreamsRackAwareAssignmentTags, ['zone', 'rack'])
    assert.equal(c.groupStreamsAcceptableRecoveryLag, 9007199254740991)
    assert.equal(c.groupStreamsTopologyDescriptionPluginClass, './my-plugin.js#MyPlugin')
    assert.equal(c.groupStreamsTopologyDescriptionPluginTimeoutMs, 2500)
    assert.equal(c.consoleListener, null)
    assert.equal(c.coordinatorStorage, 'postgres://u@db/topograph')
    assert.equal(c.logLevel, 'debug')
    assert.equal(c.raw['node.id'], ' 7 ', 'raw keeps the text as supplied')
  })

  it('keeps unknown keys in raw and lists them sorted', () => {
    const c = parseConfig({ 'zeta.option': 'z', 'node.id': '2', 'alpha.option': 'a b' })
    assert.deepEqual(c.unknownKeys, ['alpha.option', 'zeta.option'])
    assert.deepEqual(c.raw, { 'zeta.option': 'z', 'node.id': '2', 'alpha.option': 'a b' })
  })

  const invalid: [key: string, value: string, reason: string][] = [
    ['node.id', 'abc', 'Not a number of type INT'],
    ['node.id', '1.5', 'Not a number of type INT'],
    ['node.id', '2147483648', 'Not a number of type INT'],
    ['node.id', '-1', 'Value must be at least 0'],
    ['node.id', '', 'Not a number of type INT'],
    ['socket.request.max.bytes', '0', 'Value must be at least 1'],
    ['queued.max.requests', '0', 'Value must be at least 1'],
    ['connections.max.idle.ms', '10s', 'Not a number of type LONG'],
    ['connections.max.idle.ms', '9007199254740992', 'Not a number of type LONG'],
    ['offsets.topic.num.partitions', '0', 'Value must be at least 1'],
    ['offsets.topic.segment.bytes', '0', 'Value must be at least 1'],
    ['offsets.topic.segment.bytes', '2147483648', 'Not a number of type INT'],
    ['transaction.state.log.segment.bytes', '0', 'Value must be at least 1'],
    ['transaction.state.log.segment.bytes', '2147483648', 'Not a number of type INT'],
    ['share.coordinator.state.topic.num.partitions', '0', 'Value must be at least 1'],
    ['share.coordinator.state.topic.segment.bytes', '0', 'Value must be at least 1'],
    ['share.coordinator.state.topic.segment.bytes', '2147483648', 'Not a number of type INT'],
    ['offsets.retention.minutes', '0', 'Value must be at least 1'],
    ['offsets.retention.check.interval.ms', '0', 'Value must be at least 1'],
    ['offsets.commit.timeout.ms', '0', 'Value must be at least 1'],
    ['group.max.size', '0', 'Value must be at least 1'],
    ['group.min.session.timeout.ms', 'x', 'Not a number of type INT'],
    ['group.streams.session.timeout.ms', '0', 'Value must be at least 1'],
    ['group.streams.heartbeat.interval.ms', '0', 'Value must be at least 1'],
    ['group.streams.num.standby.replicas', '-1', 'Value must be at least 0'],
    ['group.streams.initial.rebalance.delay.ms', '-1', 'Value must be at least 0'],
    ['group.streams.acceptable.recovery.lag', '-1', 'Value must be at least 0'],
    ['group.streams.assignor.offload.enable', 'yes', 'Expected value to be either true or false'],
    ['group.streams.assignors', '', 'the list must not be empty'],
    ['group.streams.assignors', 'sticky,sticky', 'values must not be duplicated'],
    ['group.streams.assignors', 'sticky,,x', 'list entries must not be empty'],
    [
      'group.coordinator.rebalance.protocols',
      'classic,foo',
      "'foo' is not one of classic, consumer, share, streams",
    ],
    ['log.level', 'verbose', 'String must be one of: fatal, error, warn, info, debug, trace, silent'],
    ['data.dir', '', 'String must be non-empty'],
    ['coordinator.storage', 'redis', 'expected sqlite, memory or a postgres:// connection string'],
    ['console.listener', 'https://localhost:8080', 'expected http://host:port or none'],
    ['console.listener', 'http://localhost:70000', 'port 70000 is outside 0..65535'],
    ['group.streams.topology.description.plugin.class', '', 'String must be non-empty'],
    ['group.streams.topology.description.plugin.class', '#Plugin', 'the module part before # is empty'],
    ['group.streams.topology.description.plugin.class', 'mod#1x', "'1x' after # is not an export name"],
    ['group.streams.topology.description.plugin.timeout.ms', '0', 'Value must be at least 1'],
    ['listeners', 'localhost:9092', "'localhost:9092' is not of the form NAME://host:port"],
    ['listeners', 'PLAINTEXT://localhost:65536', "'PLAINTEXT://localhost:65536' has port 65536"],
    ['listeners', '', 'the list must not be empty'],
    [
      'listeners',
      'PLAINTEXT://a:1,plaintext://b:2',
      'each listener must have a different name; PLAINTEXT is repeated',
    ],
    ['listener.security.protocol.map', 'INTERNAL:FOO', "'FOO' is not a security protocol"],
    [
      'listener.security.protocol.map',
      'INTERNAL',
      "'INTERNAL' is not of the form LISTENER_NAME:SECURITY_PROTOCOL",
    ],
  ]
  for (const [key, value, reason] of invalid) {
    it(`rejects ${key}=${JSON.stringify(value)} naming the key`, () => {
      const e = configError(() => parseConfig({ [key]: value }))
      assert.equal(e.key, key)
      assert.equal(e.code, 'CONFIG_INVALID')
      assert.ok(
        e.message.startsWith(`Invalid value ${value.trim()} for configuration ${key}: ${reason}`),
        e.message,
      )
    })
  }

  it('gives every int and long key a type check that names the key', () => {
    for (const d of CONFIG_DEFS as readonly ConfigKeyDef[]) {
      if (d.type !== 'int' && d.type !== 'long') continue
      const e = configError(() => parseConfig({ [d.name]: 'twelve' }))
      assert.equal(
        e.message,
        `Invalid value twelve for configuration ${d.name}: Not a number of type ${d.type.toUpperCase()}`,
      )
    }
  })

  it('accepts the bounds themselves', () => {
    const c = parseConfig({
      'node.id': '0',
      'group.streams.num.standby.replicas': '0',
      'group.streams.min.assignment.interval.ms': '0',
      'group.streams.assignment.interval.ms': '0',
      'offsets.topic.num.partitions': '1',
      'group.streams.max.size': '2147483647',
    })
    assert.equal(c.nodeId, 0)
    assert.equal(c.offsetsTopicNumPartitions, 1)
    assert.equal(c.groupStreamsAssignmentIntervalMs, 0)
  })

  it('gives a key without a default its absent value, and parses it when supplied', () => {
    const defs: ConfigKeyDef[] = [
      {
        name: 'secret.key',
        type: 'password',
        default: null,
        validValues: 'any',
        importance: 'high',
        doc: 'test key',
        parse: (v) => v,
        absent: null,
      },
    ]
    assert.deepEqual(parseWithDefs(defs, {}).values, { secretKey: null })
    assert.deepEqual(parseWithDefs(defs, { 'secret.key': 'long enough' }).values, {
      secretKey: 'long enough',
    })
  })
})

describe('password type', () => {
  it('reports a bad password value as [hidden]', async () => {
    const { InvalidValue } = await import('../../src/server/config-defs.js')
    const defs: ConfigKeyDef[] = [
      {
        name: 'ssl.key.password',
        type: 'password',
        default: null,
        validValues: 'non-empty',
        importance: 'high',
        doc: 'test key',
        parse: (v) => {
          if (v === 'hunter2') throw new InvalidValue('too weak')
          return v
        },
        absent: null,
      },
    ]
    const e = configError(() => parseWithDefs(defs, { 'ssl.key.password': 'hunter2' }))
    assert.equal(e.message, 'Invalid value [hidden] for configuration ssl.key.password: too weak')
    assert.ok(!e.message.includes('hunter2'))
  })
})

describe('group.streams.* cross-checks (verifyStreamsGroupConfigs)', () => {
  const cases: [overrides: Record<string, string>, key: string, message: string][] = [
    [
      { 'group.streams.min.heartbeat.interval.ms': '20000' },
      'group.streams.max.heartbeat.interval.ms',
      'group.streams.max.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms',
    ],
    [
      { 'group.streams.heartbeat.interval.ms': '4000' },
      'group.streams.heartbeat.interval.ms',
      'group.streams.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms',
    ],
    [
      { 'group.streams.heartbeat.interval.ms': '16000' },
      'group.streams.heartbeat.interval.ms',
      'group.streams.heartbeat.interval.ms must be less than or equal to group.streams.max.heartbeat.interval.ms',
    ],
    [
      { 'group.streams.max.session.timeout.ms': '40000' },
      'group.streams.max.session.timeout.ms',
      'group.streams.max.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms',
    ],
    [
      { 'group.streams.session.timeout.ms': '44000' },
      'group.streams.session.timeout.ms',
      'group.streams.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms',
    ],
    [
      { 'group.streams.session.timeout.ms': '61000' },
      'group.streams.session.timeout.ms',
      'group.streams.session.timeout.ms must be less than or equal to group.streams.max.session.timeout.ms',
    ],
    [
      {
        'group.streams.min.session.timeout.ms': '1000',
        'group.streams.session.timeout.ms': '5000',
      },
      'group.streams.heartbeat.interval.ms',
      'group.streams.heartbeat.interval.ms must be less than group.streams.session.timeout.ms',
    ],
    [
      { 'group.streams.min.assignment.interval.ms': '20000' },
      'group.streams.max.assignment.interval.ms',
      'group.streams.max.assignment.interval.ms must be greater than or equal to group.streams.min.assignment.interval.ms',
    ],
    [
      { 'group.streams.min.assignment.interval.ms': '2000' },
      'group.streams.assignment.interval.ms',
      'group.streams.assignment.interval.ms must be greater than or equal to group.streams.min.assignment.interval.ms',
    ],
    [
      { 'group.streams.assignment.interval.ms': '15001' },
      'group.streams.assignment.interval.ms',
      'group.streams.assignment.interval.ms must be less than or equal to group.streams.max.assignment.interval.ms',
    ],
    [
      { 'group.streams.num.standby.replicas': '3' },
      'group.streams.num.standby.replicas',
      'group.streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas',
    ],
    [
      { 'group.streams.task.offset.interval.ms': '14999' },
      'group.streams.task.offset.interval.ms',
      'group.streams.task.offset.interval.ms must be greater than or equal to group.streams.min.task.offset.interval.ms',
    ],
    [
      { 'group.streams.num.warmup.replicas': '21' },
      'group.streams.num.warmup.replicas',
      'group.streams.num.warmup.replicas must be less than or equal to group.streams.max.warmup.replicas',
    ],
    [
      { 'group.streams.rack.aware.assignment.tags': 'zone, rack,zone' },
      'group.streams.rack.aware.assignment.tags',
      'group.streams.rack.aware.assignment.tags must not contain duplicate tag keys.',
    ],
    [
      { 'group.coordinator.rebalance.protocols': 'consumer,streams' },
      'group.coordinator.rebalance.protocols',
      "Disabling the 'classic' protocol is not supported.",
    ],
  ]
  for (const [overrides, key, message] of cases) {
    it(`refuses ${JSON.stringify(overrides)}`, () => {
      const e = configError(() => parseConfig(overrides))
      assert.equal(e.message, message)
      assert.equal(e.key, key)
    })
  }

  it('accepts consistent non-default values', () => {
    const c = parseConfig({
      'group.streams.min.session.timeout.ms': '10000',
      'group.streams.session.timeout.ms': '10000',
      'group.streams.min.heartbeat.interval.ms': '1000',
      'group.streams.heartbeat.interval.ms': '9999',
      'group.streams.num.standby.replicas': '2',
      'group.streams.num.warmup.replicas': '20',
      'group.streams.task.offset.interval.ms': '15000',
      'group.streams.rack.aware.assignment.tags': 'zone,rack',
    })
    assert.equal(c.groupStreamsHeartbeatIntervalMs, 9999)
    assert.equal(c.groupStreamsSessionTimeoutMs, 10000)
  })
})

describe('listeners', () => {
  it('parses NAME://host:port, IPv6 brackets, empty host and port 0', () => {
    assert.deepEqual(parseEndpoint('PLAINTEXT://localhost:9092'), {
      listenerName: 'PLAINTEXT',
      host: 'localhost',
      port: 9092,
    })
    assert.deepEqual(parseEndpoint('PLAINTEXT://[::1]:0'), {
      listenerName: 'PLAINTEXT',
      host: '::1',
      port: 0,
    })
    assert.deepEqual(parseEndpoint('internal://:9093'), { listenerName: 'INTERNAL', host: '', port: 9093 })
    assert.deepEqual(parseEndpoint('SSL://10.0.0.1:9094'), {
      listenerName: 'SSL',
      host: '10.0.0.1',
      port: 9094,
    })
  })

  it('keeps listeners of other security protocols', () => {
    const c = parseConfig({ listeners: 'PLAINTEXT://localhost:0, SASL_SSL://localhost:9095' })
    assert.deepEqual(
      c.listeners.map((e) => [e.listenerName, c.listenerSecurityProtocolMap.get(e.listenerName)]),
      [
        ['PLAINTEXT', 'PLAINTEXT'],
        ['SASL_SSL', 'SASL_SSL'],
      ],
    )
  })

  it('maps custom listener names through listener.security.protocol.map', () => {
    const c = parseConfig({
      listeners: 'INTERNAL://:9092',
      'listener.security.protocol.map': 'internal:plaintext',
    })
    assert.equal(c.listenerSecurityProtocolMap.get('INTERNAL'), 'PLAINTEXT')
    const e = configError(() => parseConfig({ listeners: 'INTERNAL://:9092' }))
    assert.equal(e.key, 'listeners')
    assert.match(e.message, /no security protocol is defined for listener INTERNAL/)
  })

  it('advertises listeners by default, a wildcard host becoming the host name', () => {
    const c = parseConfig({ listeners: 'PLAINTEXT://:0' })
    assert.deepEqual(c.listeners, [{ listenerName: 'PLAINTEXT', host: '', port: 0 }])
    assert.deepEqual(c.advertisedListeners, [{ listenerName: 'PLAINTEXT', host: hostname(), port: 0 }])
    const d = parseConfig({ listeners: 'PLAINTEXT://0.0.0.0:9092' })
    assert.equal(d.advertisedListeners[0].host, hostname())
    assert.equal(d.listeners[0].host, '0.0.0.0')
  })

  it('uses advertised.listeners when given and checks it against listeners', () => {
    const c = parseConfig({
      listeners: 'PLAINTEXT://:9092',
      'advertised.listeners': 'PLAINTEXT://broker.example:19092',
    })
    assert.deepEqual(c.advertisedListeners, [
      { listenerName: 'PLAINTEXT', host: 'broker.example', port: 19092 },
    ])
    const unknownName = configError(() => parseConfig({ 'advertised.listeners': 'SSL://x:1' }))
    assert.equal(unknownName.key, 'advertised.listeners')
    assert.match(unknownName.message, /listener SSL is not one of the names in listeners \(PLAINTEXT\)/)
    const wildcard = configError(() => parseConfig({ 'advertised.listeners': 'PLAINTEXT://0.0.0.0:9092' }))
    assert.equal(wildcard.key, 'advertised.listeners')
    assert.match(wildcard.message, /no routable host/)
  })
})

describe('docs/configuration.md', () => {
  it('holds exactly the table generated from the definitions', () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
    const m = /<!-- config-table:begin -->\n([\s\S]*?)\n<!-- config-table:end -->/.exec(doc)
    assert.ok(m, 'docs/configuration.md has the config-table markers')
    assert.equal(
      m[1],
      renderConfigTable(),
      'docs/configuration.md is out of date; regenerate the table with renderConfigTable() (see the doc)',
    )
  })

  it('lists every key once, with its default', () => {
    const table = renderConfigTable()
    for (const d of CONFIG_DEFS as readonly ConfigKeyDef[]) {
      const rows = table.split('\n').filter((r) => r.startsWith(`| \`${d.name}\` |`))
      assert.equal(rows.length, 1, d.name)
      if (d.default !== null && d.default !== '') assert.ok(rows[0].includes(`\`${d.default}\``), d.name)
    }
  })
})

describe('connection limit keys', () => {
  it("Kafka's defaults", () => {
    const c = parseConfig({})
    assert.equal(c.maxConnections, 2147483647)
    assert.equal(c.maxConnectionsPerIp, 2147483647)
    assert.deepEqual([...c.maxConnectionsPerIpOverrides], [])
    assert.equal(c.socketListenBacklogSize, 50)
    assert.equal(c.quotaWindowNum, 11)
    assert.equal(c.quotaWindowSizeSeconds, 1)
  })

  it('overrides: split at commas and at the last colon, white space dropped', () => {
    const c = parseConfig({ 'max.connections.per.ip.overrides': 'hostName:100 , 127.0.0.1:200,::1:5' })
    assert.deepEqual(
      [...c.maxConnectionsPerIpOverrides],
      [
        ['hostName', 100],
        ['127.0.0.1', 200],
        ['::1', 5],
      ],
    )
  })

  it('overrides: an entry without a colon, a count that is no int, a host with other characters', () => {
    assert.match(
      configError(() => parseConfig({ 'max.connections.per.ip.overrides': 'a:1,bcd' })).message,
      /Error parsing configuration property 'max.connections.per.ip.overrides': begin 0, end -1, length 3/,
    )
    assert.match(
      configError(() => parseConfig({ 'max.connections.per.ip.overrides': 'a:x' })).message,
      /For input string: "x"/,
    )
    const e = configError(() => parseConfig({ 'max.connections.per.ip.overrides': 'a b:1' }))
    assert.equal(e.key, 'max.connections.per.ip.overrides')
    assert.match(e.message, /contains invalid addresses : a b/)
  })

  it('max.connections.per.ip = 0 needs overrides', () => {
    const e = configError(() => parseConfig({ 'max.connections.per.ip': '0' }))
    assert.equal(e.key, 'max.connections.per.ip')
    assert.match(e.message, /can be set to zero only if max.connections.per.ip.overrides property is set/)
    assert.equal(
      parseConfig({ 'max.connections.per.ip': '0', 'max.connections.per.ip.overrides': '1.2.3.4:1' })
        .maxConnectionsPerIp,
      0,
    )
  })

  it('bounds: negative limits, a zero backlog, zero quota windows are refused', () => {
    for (const [key, value] of [
      ['max.connections', '-1'],
      ['max.connections.per.ip', '-1'],
      ['socket.listen.backlog.size', '0'],
      ['quota.window.num', '0'],
      ['quota.window.size.seconds', '0'],
    ] as const) {
      assert.equal(configError(() => parseConfig({ [key]: value })).key, key)
    }
  })
})
