// Who runs which subtopology partition, and the group view's flags.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { formatTasks, groupFlags, taskOwnership } from '../../src/console/assignments.js'
import { group, member, ordersDescription } from './fixtures.js'

describe('taskOwnership', () => {
  it('inverts the members’ assignments per subtopology and partition, listing idle subtopologies', () => {
    const members = [
      member('a', { active: { '0': [1, 0], '1': [2] }, standby: { '1': [0] } }),
      member('b', { active: { '1': [0, 1] }, warmup: { '0': [1] } }),
    ]
    assert.deepEqual(taskOwnership(members, ['10', '2']), [
      {
        subtopologyId: '0',
        partitions: [
          { partition: 0, active: ['a'], standby: [], warmup: [] },
          { partition: 1, active: ['a'], standby: [], warmup: ['b'] },
        ],
      },
      {
        subtopologyId: '1',
        partitions: [
          { partition: 0, active: ['b'], standby: ['a'], warmup: [] },
          { partition: 1, active: ['b'], standby: [], warmup: [] },
          { partition: 2, active: ['a'], standby: [], warmup: [] },
        ],
      },
      { subtopologyId: '2', partitions: [] },
      { subtopologyId: '10', partitions: [] },
    ])
  })

  it('formats task lists compactly', () => {
    assert.equal(formatTasks([]), '—')
    assert.equal(
      formatTasks([
        { subtopologyId: '0', partitions: [2, 0] },
        { subtopologyId: '1', partitions: [1] },
      ]),
      '0: [0, 2]; 1: [1]',
    )
  })
})

describe('groupFlags', () => {
  it('flags members behind the group’s topology epoch as STALE_TOPOLOGY, not those at it', () => {
    const g = group('g', {
      topologyEpoch: 2,
      members: [member('old', { topologyEpoch: 1 }), member('new', { topologyEpoch: 2 })],
    })
    assert.deepEqual(groupFlags(g, null), [
      { kind: 'stale-topology', memberId: 'old', memberEpoch: 1, groupEpoch: 2 },
    ])
  })

  it('flags a drawn description of another topology epoch', () => {
    const d = ordersDescription()
    const g = group('g', { topologyEpoch: 3, status: 'NOT_STORED' })
    assert.deepEqual(groupFlags(g, { topologyEpoch: 2, current: false, description: d }), [
      { kind: 'description-epoch', descriptionEpoch: 2, groupEpoch: 3 },
    ])
    assert.deepEqual(
      groupFlags(group('g', { topologyEpoch: 3 }), { topologyEpoch: 3, current: true, description: d }),
      [],
    )
  })
})
