// Group-level configs: Kafka's GroupConfig keys, validation rules and messages (GroupConfig.validate),
// clamping of stored values (GroupConfig.evaluate), the effective streams settings, the describe
// entries, and the manager: alterations, atomic storage, replay.
import { ApiError } from '../../../src/protocol/api-error.js'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  decodeGroupConfigKey,
  decodeGroupConfigValue,
  describeGroupConfig,
  encodeGroupConfigKey,
  encodeGroupConfigValue,
  evaluateGroupConfig,
  GROUP_CONFIG_LOG_ID,
  GROUP_CONFIG_NAMES,
  GroupConfigManager,
  type GroupConfigContext,
  streamsGroupConfigFrom,
  streamsGroupConfigWith,
  validateGroupConfig,
} from '../../../src/coordinator/service/index.js'
import { MemoryRecordStore } from '../../../src/coordinator/storage/index.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import { parseConfig } from '../../../src/server/config.js'

function context(overrides: Record<string, string> = {}, assignorNames = ['sticky']): GroupConfigContext {
  return { broker: parseConfig(overrides), assignorNames }
}

/** The message validation gives, or null when the configs are valid. */
function problem(configs: Record<string, string>, ctx = context()): string | null {
  try {
    validateGroupConfig(new Map(Object.entries(configs)), ctx)
    return null
  } catch (e) {
    assert.ok(e instanceof ApiError)
    assert.equal(e.errorCode, ErrorCode.INVALID_CONFIG)
    return e.message
  }
}

const silent = { debug() {}, info() {}, warn() {}, error() {} }

async function manager(store = new MemoryRecordStore(), overrides: Record<string, string> = {}) {
  await store.open().catch(() => undefined)
  const ctx = context(overrides)
  const m = new GroupConfigManager({
    store,
    context: ctx,
    baseStreamsConfig: streamsGroupConfigFrom(ctx.broker),
    logger: silent,
  })
  await m.load()
  return m
}

const set = (name: string, value: string | null) => ({ name, op: 0, value })
const del = (name: string) => ({ name, op: 1, value: null })
const ok = { errorCode: 0, errorMessage: null }

describe('group config keys', () => {
  it('are every key of Kafka’s GroupConfig, in its order', () => {
    assert.deepEqual(GROUP_CONFIG_NAMES, [
      'consumer.session.timeout.ms',
      'consumer.heartbeat.interval.ms',
      'consumer.assignment.interval.ms',
      'consumer.assignor.offload.enable',
      'share.session.timeout.ms',
      'share.heartbeat.interval.ms',
      'share.record.lock.duration.ms',
      'share.delivery.count.limit',
      'share.partition.max.record.locks',
      'share.auto.offset.reset',
      'share.isolation.level',
      'share.renew.acknowledge.enable',
      'share.assignment.interval.ms',
      'share.assignor.offload.enable',
      'streams.session.timeout.ms',
      'streams.heartbeat.interval.ms',
      'streams.num.standby.replicas',
      'streams.initial.rebalance.delay.ms',
      'streams.assignment.interval.ms',
      'streams.assignor.offload.enable',
      'streams.task.offset.interval.ms',
      'streams.num.warmup.replicas',
      'streams.rack.aware.assignment.tags',
      'streams.acceptable.recovery.lag',
      'streams.assignor.name',
      'errors.deadletterqueue.topic.name',
      'errors.deadletterqueue.copy.record.enable',
    ])
  })
})

describe('validateGroupConfig (Kafka’s rules and messages)', () => {
  const rows: [string, Record<string, string>, string | null][] = [
    ['unknown name', { 'streams.foo': '1' }, 'Unknown group config name: streams.foo'],
    [
      'duplicate rack tags, on the raw text',
      { 'streams.rack.aware.assignment.tags': 'zone, rack ,zone' },
      'streams.rack.aware.assignment.tags must not contain duplicate tag keys.',
    ],
    [
      'an empty rack tag',
      { 'streams.rack.aware.assignment.tags': 'zone,,rack' },
      "Configuration 'streams.rack.aware.assignment.tags' values must not be empty.",
    ],
    ['empty rack tags are allowed', { 'streams.rack.aware.assignment.tags': '' }, null],
    [
      'not an int',
      { 'streams.session.timeout.ms': '45s' },
      'Invalid value 45s for configuration streams.session.timeout.ms: Not a number of type INT',
    ],
    [
      'beyond int32',
      { 'streams.num.standby.replicas': '2147483648' },
      'Invalid value 2147483648 for configuration streams.num.standby.replicas: Not a number of type INT',
    ],
    [
      'not a long',
      { 'streams.acceptable.recovery.lag': '1.5' },
      'Invalid value 1.5 for configuration streams.acceptable.recovery.lag: Not a number of type LONG',
    ],
    [
      'a negative long',
      { 'streams.acceptable.recovery.lag': '-1' },
      'Invalid value -1 for configuration streams.acceptable.recovery.lag: Value must be at least 0',
    ],
    ['a long beyond int32', { 'streams.acceptable.recovery.lag': '9223372036854775807' }, null],
    [
      'not a boolean',
      { 'streams.assignor.offload.enable': 'yes' },
      'Invalid value yes for configuration streams.assignor.offload.enable: Expected value to be either true or false',
    ],
    ['booleans in any case', { 'streams.assignor.offload.enable': ' FALSE ' }, null],
    [
      'below a key’s own lower bound',
      { 'streams.session.timeout.ms': '0' },
      'Invalid value 0 for configuration streams.session.timeout.ms: Value must be at least 1',
    ],
    [
      'negative standby replicas',
      { 'streams.num.standby.replicas': '-1' },
      'Invalid value -1 for configuration streams.num.standby.replicas: Value must be at least 0',
    ],
    [
      'share record lock below 1000',
      { 'share.record.lock.duration.ms': '999' },
      'Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000',
    ],
    [
      'share isolation level',
      { 'share.isolation.level': 'READ_COMMITTED' },
      'Invalid value READ_COMMITTED for configuration share.isolation.level: String must be one of: read_committed, read_uncommitted',
    ],
    [
      'share auto offset reset',
      { 'share.auto.offset.reset': 'none' },
      "Invalid value none for configuration share.auto.offset.reset: Invalid value `none` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.",
    ],
    ['share auto offset reset by duration', { 'share.auto.offset.reset': 'by_duration:P1DT2H30M1.5S' }, null],
    [
      'share auto offset reset by a negative duration',
      { 'share.auto.offset.reset': 'by_duration:-PT1H' },
      "Invalid value by_duration:-PT1H for configuration share.auto.offset.reset: Invalid value `by_duration:-PT1H` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.",
    ],
    [
      'streams heartbeat interval out of the broker range',
      { 'streams.heartbeat.interval.ms': '4999' },
      'streams.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.',
    ],
    [
      'streams session timeout out of the broker range',
      { 'streams.session.timeout.ms': '60001' },
      'streams.session.timeout.ms must be in the range 45000 to 60000 inclusive.',
    ],
    [
      'standby replicas above the broker maximum',
      { 'streams.num.standby.replicas': '3' },
      'streams.num.standby.replicas must be less than or equal to 2',
    ],
    [
      'assignment interval out of the broker range',
      { 'streams.assignment.interval.ms': '15001' },
      'streams.assignment.interval.ms must be in the range 0 to 15000 inclusive.',
    ],
    [
      'task offset interval below the broker minimum',
      { 'streams.task.offset.interval.ms': '14999' },
      'streams.task.offset.interval.ms must be greater than or equal to 15000',
    ],
    [
      'warm-up replicas above the broker maximum',
      { 'streams.num.warmup.replicas': '21' },
      'streams.num.warmup.replicas must be less than or equal to 20',
    ],
    [
      'consumer session timeout out of Kafka’s range',
      { 'consumer.session.timeout.ms': '44999' },
      'consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.',
    ],
    [
      'share delivery count out of Kafka’s range',
      { 'share.delivery.count.limit': '11' },
      'share.delivery.count.limit must be in the range 2 to 10 inclusive.',
    ],
    [
      'an assignor that is not registered',
      { 'streams.assignor.name': 'range' },
      "streams.assignor.name 'range' is not a registered task assignor. Registered assignors are: [sticky].",
    ],
    ['a registered assignor', { 'streams.assignor.name': 'sticky' }, null],
    [
      'session timeout not above the heartbeat interval (broker default for the other)',
      { 'streams.heartbeat.interval.ms': '15000' },
      null,
    ],
    [
      'dead-letter topic name starting with __',
      { 'errors.deadletterqueue.topic.name': '__dlq' },
      "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'",
    ],
    [
      'every check passes',
      {
        'streams.session.timeout.ms': '50000',
        'streams.heartbeat.interval.ms': '6000',
        'streams.num.standby.replicas': '2',
        'streams.initial.rebalance.delay.ms': '0',
        'streams.task.offset.interval.ms': '15000',
        'streams.rack.aware.assignment.tags': 'zone , rack',
        'consumer.assignor.offload.enable': 'true',
      },
      null,
    ],
    [
      'the first problem in Kafka’s order: names before values',
      { 'streams.session.timeout.ms': 'x', other: '1' },
      'Unknown group config name: other',
    ],
    [
      'values in definition order before the broker bounds',
      { 'streams.num.standby.replicas': '9', 'streams.session.timeout.ms': 'x' },
      'Invalid value x for configuration streams.session.timeout.ms: Not a number of type INT',
    ],
  ]
  for (const [what, configs, expected] of rows) {
    it(what, () => assert.equal(problem(configs), expected))
  }

  it('checks session > heartbeat with the broker value of the key the group does not set', () => {
    const ctx = context({
      'group.streams.min.session.timeout.ms': '1000',
      'group.streams.session.timeout.ms': '8000',
      'group.streams.max.heartbeat.interval.ms': '20000',
    })
    assert.equal(
      problem({ 'streams.heartbeat.interval.ms': '8000' }, ctx),
      'streams.session.timeout.ms must be greater than streams.heartbeat.interval.ms',
    )
    assert.equal(
      problem({ 'streams.session.timeout.ms': '5000' }, ctx),
      'streams.session.timeout.ms must be greater than streams.heartbeat.interval.ms',
    )
    assert.equal(problem({ 'streams.session.timeout.ms': '5001' }, ctx), null)
  })

  it('takes the streams bounds from the broker configuration', () => {
    const ctx = context({ 'group.streams.max.standby.replicas': '4' })
    assert.equal(problem({ 'streams.num.standby.replicas': '4' }, ctx), null)
    assert.equal(
      problem({ 'streams.num.standby.replicas': '5' }, ctx),
      'streams.num.standby.replicas must be less than or equal to 4',
    )
  })
})

describe('evaluateGroupConfig and the effective streams settings', () => {
  it('clamps stored values to tighter broker bounds, with a WARN each; valid values stay', () => {
    const broker = parseConfig({
      'group.streams.max.standby.replicas': '1',
      'group.streams.max.session.timeout.ms': '50000',
    })
    const warnings: string[] = []
    const out = evaluateGroupConfig(
      new Map([
        ['streams.num.standby.replicas', '2'],
        ['streams.session.timeout.ms', '55000'],
        ['streams.heartbeat.interval.ms', '6000'],
      ]),
      'g',
      broker,
      (_f, m) => warnings.push(m),
    )
    assert.deepEqual(Object.fromEntries(out), {
      'streams.num.standby.replicas': '1',
      'streams.session.timeout.ms': '50000',
      'streams.heartbeat.interval.ms': '6000',
    })
    assert.deepEqual(warnings, [
      "The group config 'streams.session.timeout.ms' for group 'g' has value 55000 which exceeds the broker's allowed maximum 50000. The effective value will be capped to 50000.",
      "The group config 'streams.num.standby.replicas' for group 'g' has value 2 which exceeds the broker's allowed maximum 1. The effective value will be capped to 1.",
    ])
  })

  it('maps each streams key onto the group’s settings; the rest stays the broker’s', () => {
    const base = streamsGroupConfigFrom(parseConfig({}))
    const c = streamsGroupConfigWith(
      base,
      new Map([
        ['streams.session.timeout.ms', '50000'],
        ['streams.heartbeat.interval.ms', ' 6000 '],
        ['streams.num.standby.replicas', '1'],
        ['streams.initial.rebalance.delay.ms', '0'],
        ['streams.assignment.interval.ms', '200'],
        ['streams.assignor.offload.enable', 'FALSE'],
        ['streams.task.offset.interval.ms', '20000'],
        ['streams.num.warmup.replicas', '3'],
        ['streams.rack.aware.assignment.tags', 'zone , rack'],
        ['streams.acceptable.recovery.lag', '123'],
        ['streams.assignor.name', 'sticky'],
        ['consumer.session.timeout.ms', '50000'],
      ]),
    )
    assert.deepEqual(
      { ...c },
      {
        ...base,
        sessionTimeoutMs: 50000,
        heartbeatIntervalMs: 6000,
        numStandbyReplicas: 1,
        initialRebalanceDelayMs: 0,
        assignmentIntervalMs: 200,
        assignorOffloadEnable: false,
        taskOffsetIntervalMs: 20000,
        numWarmupReplicas: 3,
        rackAwareAssignmentTags: ['zone', 'rack'],
        acceptableRecoveryLag: 123n,
        assignorName: 'sticky',
      },
    )
    assert.deepEqual({ ...streamsGroupConfigWith(base, new Map()) }, { ...base })
  })
})

describe('describeGroupConfig', () => {
  it('every key, sorted; the group’s value first, then the broker key as set or as default', () => {
    const ctx = context({ 'group.streams.session.timeout.ms': '50000' })
    const entries = describeGroupConfig(
      new Map([
        ['streams.heartbeat.interval.ms', ' 6000 '],
        ['share.auto.offset.reset', 'earliest'],
        ['streams.rack.aware.assignment.tags', 'zone , rack'],
      ]),
      ctx,
    )
    assert.deepEqual(
      entries.map((e) => e.name),
      [...GROUP_CONFIG_NAMES].sort(),
    )
    const byName = new Map(entries.map((e) => [e.name, e]))
    const pick = (n: string) => {
      const e = byName.get(n)!
      return { value: e.value, source: e.source, type: e.type, synonyms: e.synonyms }
    }
    assert.deepEqual(pick('streams.heartbeat.interval.ms'), {
      value: '6000',
      source: 'GROUP_CONFIG',
      type: 'int',
      synonyms: [
        { name: 'streams.heartbeat.interval.ms', value: '6000', source: 'GROUP_CONFIG' },
        { name: 'group.streams.heartbeat.interval.ms', value: '5000', source: 'DEFAULT_CONFIG' },
      ],
    })
    assert.deepEqual(pick('streams.session.timeout.ms'), {
      value: '50000',
      source: 'STATIC_BROKER_CONFIG',
      type: 'int',
      synonyms: [
        { name: 'group.streams.session.timeout.ms', value: '50000', source: 'STATIC_BROKER_CONFIG' },
        { name: 'group.streams.session.timeout.ms', value: '45000', source: 'DEFAULT_CONFIG' },
      ],
    })
    assert.deepEqual(pick('streams.rack.aware.assignment.tags'), {
      value: 'zone,rack',
      source: 'GROUP_CONFIG',
      type: 'list',
      synonyms: [
        { name: 'streams.rack.aware.assignment.tags', value: 'zone,rack', source: 'GROUP_CONFIG' },
        { name: 'group.streams.rack.aware.assignment.tags', value: '', source: 'DEFAULT_CONFIG' },
      ],
    })
    assert.deepEqual(pick('streams.assignor.name'), {
      value: 'sticky',
      source: 'DEFAULT_CONFIG',
      type: 'string',
      synonyms: [{ name: 'group.streams.assignors', value: 'sticky', source: 'DEFAULT_CONFIG' }],
    })
    assert.deepEqual(pick('share.auto.offset.reset'), {
      value: 'earliest',
      source: 'GROUP_CONFIG',
      type: 'string',
      synonyms: [
        { name: 'share.auto.offset.reset', value: 'earliest', source: 'GROUP_CONFIG' },
        { name: 'share.auto.offset.reset', value: 'latest', source: 'DEFAULT_CONFIG' },
      ],
    })
    assert.deepEqual(pick('consumer.heartbeat.interval.ms'), {
      value: '5000',
      source: 'DEFAULT_CONFIG',
      type: 'int',
      synonyms: [{ name: 'group.consumer.heartbeat.interval.ms', value: '5000', source: 'DEFAULT_CONFIG' }],
    })
    assert.equal(byName.get('streams.acceptable.recovery.lag')?.type, 'long')
    assert.equal(byName.get('errors.deadletterqueue.topic.name')?.value, '')
    assert.ok(entries.every((e) => e.documentation.length > 0))
  })
})

describe('consumer keys follow the broker’s group.consumer.* settings', () => {
  const broker = {
    'group.consumer.session.timeout.ms': '50000',
    'group.consumer.min.session.timeout.ms': '10000',
    'group.consumer.max.session.timeout.ms': '90000',
    'group.consumer.heartbeat.interval.ms': '3000',
    'group.consumer.min.heartbeat.interval.ms': '1000',
    'group.consumer.max.heartbeat.interval.ms': '9000',
    'group.consumer.assignment.interval.ms': '250',
    'group.consumer.assignor.offload.enable': 'false',
  }

  it('describes the broker’s values, with the static and default synonyms', () => {
    const entries = describeGroupConfig(undefined, context(broker))
    const pick = (name: string) => {
      const e = entries.find((x) => x.name === name)!
      return { value: e.value, source: e.source, synonyms: e.synonyms }
    }
    assert.deepEqual(pick('consumer.session.timeout.ms'), {
      value: '50000',
      source: 'STATIC_BROKER_CONFIG',
      synonyms: [
        { name: 'group.consumer.session.timeout.ms', value: '50000', source: 'STATIC_BROKER_CONFIG' },
        { name: 'group.consumer.session.timeout.ms', value: '45000', source: 'DEFAULT_CONFIG' },
      ],
    })
    assert.equal(pick('consumer.heartbeat.interval.ms').value, '3000')
    assert.equal(pick('consumer.assignment.interval.ms').value, '250')
    assert.deepEqual(pick('consumer.assignor.offload.enable'), {
      value: 'false',
      source: 'STATIC_BROKER_CONFIG',
      synonyms: [
        { name: 'group.consumer.assignor.offload.enable', value: 'false', source: 'STATIC_BROKER_CONFIG' },
        { name: 'group.consumer.assignor.offload.enable', value: 'true', source: 'DEFAULT_CONFIG' },
      ],
    })
    // A group value still wins, and the broker's value stays in the synonyms.
    const own = describeGroupConfig(new Map([['consumer.session.timeout.ms', '60000']]), context(broker))
    const e = own.find((x) => x.name === 'consumer.session.timeout.ms')!
    assert.equal(e.value, '60000')
    assert.deepEqual(
      e.synonyms.map((x) => x.source),
      ['GROUP_CONFIG', 'STATIC_BROKER_CONFIG', 'DEFAULT_CONFIG'],
    )
  })

  it('validates against the broker’s bounds, not Kafka’s default bounds', () => {
    const ctx = context(broker)
    assert.equal(problem({ 'consumer.session.timeout.ms': '20000' }, ctx), null)
    assert.equal(
      problem({ 'consumer.session.timeout.ms': '9999' }, ctx),
      'consumer.session.timeout.ms must be in the range 10000 to 90000 inclusive.',
    )
    assert.equal(problem({ 'consumer.heartbeat.interval.ms': '1000' }, ctx), null)
    assert.equal(
      problem({ 'consumer.heartbeat.interval.ms': '9001' }, ctx),
      'consumer.heartbeat.interval.ms must be in the range 1000 to 9000 inclusive.',
    )
    // The cross check compares with the broker's session timeout when the group sets only one.
    assert.equal(
      problem(
        { 'consumer.heartbeat.interval.ms': '9000' },
        context({ ...broker, 'group.consumer.session.timeout.ms': '12000' }),
      ),
      null,
    )
  })

  it('clamps stored values to the broker’s current bounds', () => {
    const out = evaluateGroupConfig(
      new Map([
        ['consumer.session.timeout.ms', '95000'],
        ['consumer.heartbeat.interval.ms', '500'],
      ]),
      'g',
      parseConfig(broker),
    )
    assert.equal(out.get('consumer.session.timeout.ms'), '90000')
    assert.equal(out.get('consumer.heartbeat.interval.ms'), '1000')
  })
})

describe('GroupConfigManager', () => {
  it('SET, DELETE and validate-only; a group left with no key is forgotten', async () => {
    const m = await manager()
    assert.deepEqual(
      await m.alter([{ groupId: 'g', changes: [set('streams.num.standby.replicas', '1')] }], true),
      [ok],
    )
    assert.equal(m.overrides('g'), undefined, 'validate-only changes nothing')
    assert.deepEqual(
      await m.alter(
        [
          {
            groupId: 'g',
            changes: [set('streams.num.standby.replicas', '1'), set('streams.heartbeat.interval.ms', '6000')],
          },
        ],
        false,
      ),
      [ok],
    )
    assert.deepEqual(Object.fromEntries(m.overrides('g')!), {
      'streams.num.standby.replicas': '1',
      'streams.heartbeat.interval.ms': '6000',
    })
    assert.equal(m.streamsConfig('g').numStandbyReplicas, 1)
    assert.equal(m.streamsConfig('g').heartbeatIntervalMs, 6000)
    assert.equal(m.streamsConfig('other').heartbeatIntervalMs, 5000)
    assert.deepEqual(m.groupIds(), ['g'])
    await m.alter(
      [
        {
          groupId: 'g',
          changes: [del('streams.num.standby.replicas'), del('streams.heartbeat.interval.ms')],
        },
      ],
      false,
    )
    assert.equal(m.overrides('g'), undefined)
    assert.deepEqual(m.groupIds(), [])
    assert.equal(m.streamsConfig('g').heartbeatIntervalMs, 5000)
  })

  it('refuses APPEND and SUBTRACT on every group key, unknown operations, long values, the default group', async () => {
    const m = await manager()
    const r = await m.alter(
      [
        { groupId: 'a', changes: [{ name: 'streams.rack.aware.assignment.tags', op: 2, value: 'zone' }] },
        { groupId: 'b', changes: [{ name: 'streams.num.standby.replicas', op: 3, value: '1' }] },
        { groupId: 'c', changes: [{ name: 'streams.num.standby.replicas', op: 7, value: '1' }] },
        { groupId: 'd', changes: [set('errors.deadletterqueue.topic.name', 'x'.repeat(32768))] },
        { groupId: 'e', changes: [set('errors.deadletterqueue.topic.name', 'x'.repeat(32767))] },
        { groupId: '', changes: [set('streams.num.standby.replicas', '1')] },
        { groupId: 'f', changes: [set('streams.num.standby.replicas', '3')] },
      ],
      false,
    )
    assert.deepEqual(r, [
      {
        errorCode: ErrorCode.INVALID_CONFIG,
        errorMessage: "Can't APPEND to key streams.rack.aware.assignment.tags because its type is not LIST.",
      },
      {
        errorCode: ErrorCode.INVALID_CONFIG,
        errorMessage: "Can't SUBTRACT to key streams.num.standby.replicas because its type is not LIST.",
      },
      { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unknown operations type 7' },
      {
        errorCode: ErrorCode.INVALID_CONFIG,
        errorMessage:
          'The configuration value cannot be added because it exceeds the maximum value size of 32767 bytes.',
      },
      ok,
      { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Default group resources are not allowed.' },
      {
        errorCode: ErrorCode.INVALID_CONFIG,
        errorMessage: 'streams.num.standby.replicas must be less than or equal to 2',
      },
    ])
    assert.deepEqual(m.groupIds(), ['e'], 'only the valid alteration is stored')
  })

  it('validates the merged configs: a stored value is checked again; deleting an unknown key is a no-op', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    await (await manager(store)).alter(
      [{ groupId: 'g', changes: [set('streams.num.standby.replicas', '2')] }],
      false,
    )
    // Restarted with a lower maximum: the stored value fails the next alteration of the group.
    const m = await manager(store, { 'group.streams.max.standby.replicas': '1' })
    assert.deepEqual(
      await m.alter([{ groupId: 'g', changes: [set('streams.heartbeat.interval.ms', '6000')] }], false),
      [
        {
          errorCode: ErrorCode.INVALID_CONFIG,
          errorMessage: 'streams.num.standby.replicas must be less than or equal to 1',
        },
      ],
    )
    assert.deepEqual(
      await m.alter([{ groupId: 'g', changes: [del('streams.num.standby.replicas')] }], false),
      [ok],
    )
    assert.deepEqual(await m.alter([{ groupId: 'h', changes: [del('no.such.key')] }], false), [ok])
    assert.deepEqual(m.groupIds(), [])
    assert.deepEqual(await m.alter([{ groupId: 'h', changes: [set('no.such.key', '1')] }], false), [
      { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'Unknown group config name: no.such.key' },
    ])
  })

  it('stores one record per changed key in one append; a new manager over the store replays them', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const m = await manager(store)
    await m.alter(
      [
        {
          groupId: 'g1',
          changes: [set('streams.num.standby.replicas', '1'), set('streams.heartbeat.interval.ms', '6000')],
        },
        { groupId: 'g2', changes: [set('streams.assignor.name', 'sticky')] },
      ],
      false,
    )
    // Unchanged values write nothing.
    await m.alter([{ groupId: 'g1', changes: [set('streams.num.standby.replicas', '1')] }], false)
    await m.alter([{ groupId: 'g1', changes: [del('streams.heartbeat.interval.ms')] }], false)
    const log = (await store.load(GROUP_CONFIG_LOG_ID)).map((r) => ({
      ...decodeGroupConfigKey(r.key),
      value: r.value === null ? null : decodeGroupConfigValue(r.value),
    }))
    assert.deepEqual(log, [
      { groupId: 'g1', name: 'streams.num.standby.replicas', value: '1' },
      { groupId: 'g1', name: 'streams.heartbeat.interval.ms', value: '6000' },
      { groupId: 'g2', name: 'streams.assignor.name', value: 'sticky' },
      { groupId: 'g1', name: 'streams.heartbeat.interval.ms', value: null },
    ])
    const again = await manager(store)
    assert.deepEqual(Object.fromEntries(again.overrides('g1')!), { 'streams.num.standby.replicas': '1' })
    assert.deepEqual(Object.fromEntries(again.overrides('g2')!), { 'streams.assignor.name': 'sticky' })
    assert.equal(again.streamsConfig('g1').numStandbyReplicas, 1)
    assert.equal(again.streamsConfig('g2').assignorName, 'sticky')
  })

  it('a failed append answers UNKNOWN_SERVER_ERROR and changes nothing', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const m = await manager(store)
    store.failNextAppend()
    assert.deepEqual(
      await m.alter(
        [
          { groupId: 'g', changes: [set('streams.num.standby.replicas', '1')] },
          { groupId: 'h', changes: [set('streams.num.standby.replicas', '9')] },
        ],
        false,
      ),
      [
        { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null },
        {
          errorCode: ErrorCode.INVALID_CONFIG,
          errorMessage: 'streams.num.standby.replicas must be less than or equal to 2',
        },
      ],
    )
    assert.equal(m.overrides('g'), undefined)
    assert.equal(m.streamsConfig('g').numStandbyReplicas, 0)
    assert.deepEqual(await store.load(GROUP_CONFIG_LOG_ID), [])
  })

  it('clamps stored values to the bounds of the broker it loads on', async () => {
    const store = new MemoryRecordStore()
    await store.open()
    const m = await manager(store)
    await m.alter([{ groupId: 'g', changes: [set('streams.num.standby.replicas', '2')] }], false)
    const tighter = await manager(store, { 'group.streams.max.standby.replicas': '1' })
    assert.equal(tighter.overrides('g')?.get('streams.num.standby.replicas'), '2', 'stored as given')
    assert.equal(tighter.streamsConfig('g').numStandbyReplicas, 1, 'applied clamped')
  })

  it('record keys and values round-trip; a foreign record type is refused', () => {
    const key = encodeGroupConfigKey('grüppe', 'streams.num.standby.replicas')
    assert.deepEqual(decodeGroupConfigKey(key), { groupId: 'grüppe', name: 'streams.num.standby.replicas' })
    assert.equal(decodeGroupConfigValue(encodeGroupConfigValue('a,b')), 'a,b')
    assert.throws(() => decodeGroupConfigKey(Uint8Array.of(0x7f, 0x02, 0, 0, 0, 0)), /unexpected record type/)
    assert.throws(() => decodeGroupConfigKey(key.subarray(0, key.length - 1)), /truncated/)
    assert.throws(() => decodeGroupConfigValue(Uint8Array.of(0, 1, 65)), /version 1/)
  })
})
