import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isLocalError } from '../../../../../src/errors.js'
import {
  assignmentConfigsFromMap,
  assignmentConfigsToMap,
  DEFAULT_ASSIGNMENT_CONFIGS,
  MOCK_ASSIGNOR_CLASS_NAME,
  MockAssignor,
  resolveStreamsGroupAssignors,
  STICKY_TASK_ASSIGNOR_CLASS_NAME,
  STREAMS_GROUP_ASSIGNORS_DEFAULT,
  StickyTaskAssignor,
  type TaskAssignor,
  TaskAssignorRegistry,
} from '../../../../../src/coordinator/shard/streams/assignor/index.js'

function custom(name: string): TaskAssignor {
  return { name: () => name, assign: () => ({ members: new Map() }) }
}

function configError(message: string) {
  return (e: unknown) => isLocalError(e, 'ASSIGNOR_INVALID_CONFIG') && e.message === message
}

describe('assignor resolution (group.streams.assignors)', () => {
  test('the default is the sticky assignor', () => {
    assert.deepEqual(STREAMS_GROUP_ASSIGNORS_DEFAULT, ['sticky'])
    const [a] = resolveStreamsGroupAssignors(STREAMS_GROUP_ASSIGNORS_DEFAULT)
    assert.ok(a instanceof StickyTaskAssignor)
  })

  test('built-ins by name or by Kafka class name; mock by class name; others through loadCustom', () => {
    const loaded: string[] = []
    const assignors = resolveStreamsGroupAssignors(
      [STICKY_TASK_ASSIGNOR_CLASS_NAME, MOCK_ASSIGNOR_CLASS_NAME, 'com.x.Y'],
      {
        loadCustom: (className) => {
          loaded.push(className)
          return custom('y')
        },
      },
    )
    assert.deepEqual(
      assignors.map((a) => a.name()),
      ['sticky', 'mock', 'y'],
    )
    assert.ok(assignors[0] instanceof StickyTaskAssignor)
    assert.ok(assignors[1] instanceof MockAssignor)
    assert.deepEqual(loaded, ['com.x.Y'])
  })

  test('mock is not a built-in name', () => {
    assert.throws(
      () => resolveStreamsGroupAssignors(['mock']),
      configError('Invalid value mock for configuration group.streams.assignors: Class cannot be found'),
    )
  })

  test('list rules: not empty, no duplicates, no empty entry', () => {
    assert.throws(
      () => resolveStreamsGroupAssignors([]),
      configError(
        "Configuration 'group.streams.assignors' must not be empty. Valid values include: any non-empty value",
      ),
    )
    assert.throws(
      () => resolveStreamsGroupAssignors(['sticky', 'sticky']),
      configError("Configuration 'group.streams.assignors' values must not be duplicated."),
    )
    assert.throws(
      () => resolveStreamsGroupAssignors(['sticky', '']),
      configError("Configuration 'group.streams.assignors' values must not be empty."),
    )
  })

  test('a custom assignor may not be named sticky, and names are unique', () => {
    assert.throws(
      () => resolveStreamsGroupAssignors(['com.x.Fake'], { loadCustom: () => custom('sticky') }),
      configError(
        "Invalid value com.x.Fake for configuration group.streams.assignors: Assignor name 'sticky' is reserved by a " +
          'built-in assignor. A custom assignor must not reuse the name of a built-in assignor',
      ),
    )
    assert.throws(
      () => resolveStreamsGroupAssignors(['sticky', STICKY_TASK_ASSIGNOR_CLASS_NAME]),
      configError(
        `Invalid value ${STICKY_TASK_ASSIGNOR_CLASS_NAME} for configuration group.streams.assignors: Assignor name ` +
          "'sticky' is already registered by another configured assignor. Assignor names, whether built-in or " +
          'custom, must be unique',
      ),
    )
  })
})

describe('TaskAssignorRegistry (streams.assignor.name)', () => {
  const registry = TaskAssignorRegistry.fromConfig(['sticky', MOCK_ASSIGNOR_CLASS_NAME])

  test('selects the group assignor if registered, else the first configured', () => {
    assert.equal(registry.select('mock').name(), 'mock')
    assert.equal(registry.select('sticky').name(), 'sticky')
    assert.equal(registry.select(null).name(), 'sticky')
    assert.equal(registry.select(undefined).name(), 'sticky')
    assert.equal(registry.select('gone').name(), 'sticky')
    assert.equal(
      TaskAssignorRegistry.fromConfig([MOCK_ASSIGNOR_CLASS_NAME, 'sticky']).select('gone').name(),
      'mock',
    )
    assert.equal(registry.defaultAssignor.name(), 'sticky')
    assert.deepEqual(registry.names(), ['sticky', 'mock'])
    assert.equal(registry.has('mock'), true)
    assert.equal(registry.has('other'), false)
  })

  test('one instance per name is shared', () => {
    assert.equal(registry.select('sticky'), registry.select(null))
  })

  test('validates streams.assignor.name with Kafka message', () => {
    assert.equal(registry.validateGroupAssignorName('mock'), null)
    assert.equal(
      registry.validateGroupAssignorName('x'),
      "streams.assignor.name 'x' is not a registered task assignor. Registered assignors are: [sticky, mock].",
    )
  })

  test('rejects an empty or duplicate list', () => {
    assert.throws(() => new TaskAssignorRegistry([]), RangeError)
    assert.throws(() => new TaskAssignorRegistry([custom('a'), custom('a')]), RangeError)
  })
})

describe('assignment configs', () => {
  test('an empty map means the defaults', () => {
    assert.equal(assignmentConfigsFromMap(new Map()), DEFAULT_ASSIGNMENT_CONFIGS)
    assert.deepEqual(DEFAULT_ASSIGNMENT_CONFIGS, { numStandbyReplicas: 0, rackAwareAssignmentTags: [] })
  })

  test('parses standby replicas and tags', () => {
    assert.deepEqual(assignmentConfigsFromMap({ 'num.standby.replicas': '2' }), {
      numStandbyReplicas: 2,
      rackAwareAssignmentTags: [],
    })
    assert.deepEqual(
      assignmentConfigsFromMap({ 'num.standby.replicas': '1', 'rack.aware.assignment.tags': 'zone,rack,' }),
      {
        numStandbyReplicas: 1,
        rackAwareAssignmentTags: ['zone', 'rack'],
      },
    )
    assert.deepEqual(
      assignmentConfigsFromMap({ 'num.standby.replicas': '0', 'rack.aware.assignment.tags': '' }),
      {
        numStandbyReplicas: 0,
        rackAwareAssignmentTags: [],
      },
    )
  })

  test('a non-empty map without a valid standby count is rejected', () => {
    assert.throws(() => assignmentConfigsFromMap({ 'rack.aware.assignment.tags': 'a' }), RangeError)
    assert.throws(() => assignmentConfigsFromMap({ 'num.standby.replicas': 'two' }), RangeError)
    assert.throws(() => assignmentConfigsFromMap({ 'num.standby.replicas': '99999999999' }), RangeError)
  })

  test('to map: standby count always, tags only when present, joined with commas', () => {
    assert.deepEqual(
      [...assignmentConfigsToMap({ numStandbyReplicas: 1, rackAwareAssignmentTags: [] })],
      [['num.standby.replicas', '1']],
    )
    assert.deepEqual(
      [...assignmentConfigsToMap({ numStandbyReplicas: 0, rackAwareAssignmentTags: ['a', 'b'] })],
      [
        ['num.standby.replicas', '0'],
        ['rack.aware.assignment.tags', 'a,b'],
      ],
    )
  })
})
