// The admin client's describeConfigs and incrementalAlterConfigs against a real server over TCP:
// typed entries, synonyms and documentation, per-resource errors as Kafka's Admin reports them,
// broker resources sent to their broker, validate-only.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Admin, type ConfigResource, KafkaError } from '../../../src/clients/admin/index.js'
import { startTestServer, type TestServer } from '../../server/harness.js'

let ts: TestServer
let admin: Admin

before(async () => {
  ts = await startTestServer({ 'group.streams.heartbeat.interval.ms': '6000' })
  admin = Admin.create({ bootstrapServers: `127.0.0.1:${ts.port}`, retryBackoffMs: 5, retryBackoffMaxMs: 20 })
  await admin.createTopics([{ name: 'events', numPartitions: 1, configs: { 'retention.ms': '5000' } }]).all()
})

after(async () => {
  await admin?.close()
  await ts?.stop()
})

const group = (name: string): ConfigResource => ({ type: 'GROUP', name })

async function rejection(p: Promise<unknown>): Promise<KafkaError> {
  try {
    await p
  } catch (e) {
    assert.ok(e instanceof KafkaError, String(e))
    return e
  }
  assert.fail('expected a rejection')
}

describe('Admin config resources', () => {
  it('describeConfigs: typed entries of a group, a topic and this broker', async () => {
    const result = admin.describeConfigs(
      [group('app'), { type: 'topic', name: 'events' }, { type: 'BROKER', name: '1' }],
      { includeSynonyms: true, includeDocumentation: true },
    )
    assert.deepEqual(
      result.resources.map((r) => `${r.type}:${r.name}`),
      ['GROUP:app', 'TOPIC:events', 'BROKER:1'],
    )
    const groupConfig = await result.get(group('app'))
    assert.deepEqual(groupConfig.get('streams.heartbeat.interval.ms'), {
      name: 'streams.heartbeat.interval.ms',
      value: '6000',
      source: 'STATIC_BROKER_CONFIG',
      isSensitive: false,
      isReadOnly: false,
      synonyms: [
        { name: 'group.streams.heartbeat.interval.ms', value: '6000', source: 'STATIC_BROKER_CONFIG' },
        { name: 'group.streams.heartbeat.interval.ms', value: '5000', source: 'DEFAULT_CONFIG' },
      ],
      type: 'INT',
      documentation: 'The heartbeat interval handed to the members of a streams group (HeartbeatIntervalMs).',
    })
    const topic = await result.get({ type: 'TOPIC', name: 'events' })
    assert.deepEqual(
      [topic.get('retention.ms')?.value, topic.get('retention.ms')?.source, topic.get('retention.ms')?.type],
      ['5000', 'DYNAMIC_TOPIC_CONFIG', 'LONG'],
    )
    const broker = await result.get({ type: 'broker', name: '1' })
    assert.deepEqual(
      [broker.get('node.id')?.value, broker.get('node.id')?.source, broker.get('node.id')?.isReadOnly],
      ['1', 'DEFAULT_CONFIG', true],
    )
    const all = await result.all()
    assert.equal(all.size, 3)
  })

  it('incrementalAlterConfigs: SET, validate-only, DELETE; describe follows', async () => {
    await admin
      .incrementalAlterConfigs([
        [
          group('orders-app'),
          [
            { name: 'streams.num.standby.replicas', value: '1', opType: 'SET' },
            { name: 'streams.session.timeout.ms', value: '50000', opType: 'SET' },
          ],
        ],
      ])
      .all()
    const described = await admin.describeConfigs([group('orders-app')]).get(group('orders-app'))
    assert.deepEqual(
      ['streams.num.standby.replicas', 'streams.session.timeout.ms'].map((k) => [
        described.get(k)?.value,
        described.get(k)?.source,
      ]),
      [
        ['1', 'DYNAMIC_GROUP_CONFIG'],
        ['50000', 'DYNAMIC_GROUP_CONFIG'],
      ],
    )
    assert.deepEqual(described.get('streams.num.standby.replicas')?.synonyms, [], 'no synonyms unless asked')

    await admin
      .incrementalAlterConfigs(
        new Map([
          [group('orders-app'), [{ name: 'streams.num.standby.replicas', value: '2', opType: 'SET' }]],
        ]),
        { validateOnly: true },
      )
      .all()
    await admin
      .incrementalAlterConfigs([
        [group('orders-app'), [{ name: 'streams.session.timeout.ms', value: null, opType: 'DELETE' }]],
      ])
      .all()
    const after = await admin.describeConfigs([group('orders-app')]).get(group('orders-app'))
    assert.deepEqual(
      [after.get('streams.num.standby.replicas')?.value, after.get('streams.session.timeout.ms')?.source],
      ['1', 'DEFAULT_CONFIG'],
    )
  })

  it('each resource fails on its own with Kafka’s error and the broker’s message', async () => {
    const result = admin.incrementalAlterConfigs([
      [group('ok'), [{ name: 'streams.num.standby.replicas', value: '1', opType: 'SET' }]],
      [group('bad'), [{ name: 'streams.num.standby.replicas', value: '7', opType: 'SET' }]],
      [group('tags'), [{ name: 'streams.rack.aware.assignment.tags', value: 'zone', opType: 'APPEND' }]],
      [{ type: 'TOPIC', name: 'events' }, [{ name: 'retention.ms', value: '-5', opType: 'SET' }]],
    ])
    await result.get(group('ok'))
    const bad = await rejection(result.get(group('bad')))
    assert.deepEqual(
      [bad.errorName, bad.code, bad.message],
      ['INVALID_CONFIG', 40, 'streams.num.standby.replicas must be less than or equal to 2'],
    )
    const tags = await rejection(result.get(group('tags')))
    assert.equal(
      tags.message,
      "Can't APPEND to key streams.rack.aware.assignment.tags because its type is not LIST.",
    )
    const topic = await rejection(result.get({ type: 'TOPIC', name: 'events' }))
    assert.deepEqual(
      [topic.errorName, topic.message],
      ['INVALID_CONFIG', 'Invalid value -5 for configuration retention.ms: Value must be at least -1'],
    )
    await rejection(result.all())

    const described = admin.describeConfigs([{ type: 'TOPIC', name: 'ghost' }, group('')])
    const ghost = await rejection(described.get({ type: 'TOPIC', name: 'ghost' }))
    assert.deepEqual(
      [ghost.errorName, ghost.message],
      ['UNKNOWN_TOPIC_OR_PARTITION', 'This server does not host this topic-partition.'],
    )
    const empty = await rejection(described.get(group('')))
    assert.deepEqual([empty.errorName, empty.message], ['INVALID_REQUEST', 'Group name must not be empty'])
  })

  it('broker resources go to that broker; an id that is not a number fails before sending', async () => {
    const result = admin.describeConfigs([
      { type: 'BROKER', name: '1' },
      { type: 'BROKER', name: '' },
      { type: 'BROKER', name: 'one' },
    ])
    assert.ok((await result.get({ type: 'BROKER', name: '1' })).entries.length > 0)
    assert.deepEqual((await result.get({ type: 'BROKER', name: '' })).entries, [])
    const bad = await rejection(result.get({ type: 'BROKER', name: 'one' }))
    assert.equal(bad.message, 'For input string: "one"')
    const refused = await rejection(
      admin
        .incrementalAlterConfigs([
          [{ type: 'BROKER', name: '1' }, [{ name: 'log.level', value: 'debug', opType: 'SET' }]],
        ])
        .all(),
    )
    assert.deepEqual(
      [refused.errorName, refused.message],
      ['INVALID_REQUEST', 'Cannot update these configs dynamically: [log.level]'],
    )
  })
})
