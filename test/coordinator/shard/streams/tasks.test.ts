import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  EMPTY_TASK_SET,
  TaskListBuilder,
  taskEpochsFromRecord,
  taskEpochsToRecord,
  taskSetFromList,
  taskSetToList,
} from '../../../../src/coordinator/shard/streams/tasks.js'

const triples = (l: { forEach: (fn: (id: string, p: number, e: number) => void) => void }) => {
  const out: [string, number, number][] = []
  l.forEach((id, p, e) => {
    out.push([id, p, e])
  })
  return out
}

describe('TaskList', () => {
  it('sorts by subtopology id then partition and keeps one of each task (the last epoch set)', () => {
    const l = new TaskListBuilder()
      .set('b', 1, 7)
      .set('a', 10, 1)
      .set('a', 2, 3)
      .set('b', 1, 9)
      .set('a', 2, 4)
      .build()
    assert.deepEqual(triples(l), [
      ['a', 2, 4],
      ['a', 10, 1],
      ['b', 1, 9],
    ])
    assert.equal(l.size, 3)
    assert.equal(l.epoch('a', 10), 1)
    assert.equal(l.epoch('a', 3), undefined)
    assert.ok(l.has('b', 1) && !l.has('b', 2) && !l.has('c', 1))
    assert.deepEqual(
      [...l.bySubtopology()],
      [
        ['a', [2, 10]],
        ['b', [1]],
      ],
    )
  })

  it('the empty list is shared', () => {
    assert.equal(new TaskListBuilder().build(), EMPTY_TASK_SET)
    assert.equal(taskSetFromList([{ subtopologyId: '0', partitions: [] }]), EMPTY_TASK_SET)
  })

  it('compares tasks with or without epochs', () => {
    const a = new TaskListBuilder().set('0', 1, 3).set('0', 2, 3).build()
    const b = taskSetFromList([{ subtopologyId: '0', partitions: [2, 1] }])
    assert.ok(a.sameTasks(b) && b.sameTasks(a))
    assert.ok(!a.sameTasksAndEpochs(b))
    assert.ok(a.sameTasksAndEpochs(b.withEpoch(3)))
    assert.ok(b.isSubsetOf(a) && !taskSetFromList([{ subtopologyId: '1', partitions: [1] }]).isSubsetOf(a))
    assert.equal(a.withoutEpochs().epoch('0', 1), -1)
    assert.equal(b.withoutEpochs(), b)
  })

  it('round-trips the record and wire forms', () => {
    const record = [
      { subtopologyId: '0', partitions: [0, 3], assignmentEpochs: [5, 6] },
      { subtopologyId: '1', partitions: [2], assignmentEpochs: [7] },
    ]
    assert.deepEqual(taskEpochsToRecord(taskEpochsFromRecord(record, 9)), record)
    // Epochs that do not line up with the partitions: every task gets the fallback epoch.
    assert.deepEqual(
      taskEpochsToRecord(taskEpochsFromRecord([{ ...record[0]!, assignmentEpochs: [1] }], 9)),
      [{ subtopologyId: '0', partitions: [0, 3], assignmentEpochs: [9, 9] }],
    )
    assert.deepEqual(taskSetToList(taskSetFromList([{ subtopologyId: '1', partitions: [4, 0] }])), [
      { subtopologyId: '1', partitions: [0, 4] },
    ])
  })
})
