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

  it('keeps any 32-bit partition and epoch, one or several subtopologies, and long lists', () => {
    const MAX = 2 ** 31 - 1
    const MIN = -(2 ** 31)
    const record = [
      {
        subtopologyId: 'a',
        partitions: [0, 255, 256, 65535, 65536, MAX],
        assignmentEpochs: [MIN, -2, -1, 0, 65536, MAX],
      },
      { subtopologyId: 'b', partitions: [7], assignmentEpochs: [300] },
    ]
    const l = taskEpochsFromRecord(record, 0)
    assert.deepEqual(taskEpochsToRecord(l), record)
    assert.equal(l.epoch('a', MAX), MAX)
    assert.equal(l.epoch('a', 65536), 65536)
    assert.equal(l.epoch('b', 7), 300)
    assert.equal(l.epoch('a', 7), undefined)
    assert.ok(l.has('a', 65535) && !l.has('a', 65534) && !l.has('c', 0))
    const one = taskEpochsFromRecord([record[0]!], 0)
    assert.ok(!one.sameTasks(l) && one.isSubsetOf(l) && !l.isSubsetOf(one))
    // Lists that differ only in their subtopology ids.
    const x = taskSetFromList([{ subtopologyId: 'x', partitions: [1, 2] }])
    const y = taskSetFromList([{ subtopologyId: 'y', partitions: [1, 2] }])
    const xy = taskSetFromList([
      { subtopologyId: 'x', partitions: [1] },
      { subtopologyId: 'y', partitions: [2] },
    ])
    assert.ok(!x.sameTasks(y) && !x.sameTasks(xy) && !xy.sameTasks(y) && x.sameTasks(x.withEpoch(4)))
    // More tasks than one String.fromCharCode call takes at once.
    const partitions = Array.from({ length: 5000 }, (_, i) => i * 70_001)
    const long = taskEpochsFromRecord(
      [{ subtopologyId: '0', partitions, assignmentEpochs: partitions.map((p) => p % 1000) }],
      0,
    )
    assert.equal(long.size, 5000)
    assert.equal(long.epoch('0', 4999 * 70_001), (4999 * 70_001) % 1000)
    assert.deepEqual(long.bySubtopology().get('0'), partitions)
    assert.throws(() => new TaskListBuilder().add('0', 2 ** 31).build(), RangeError)
  })

  it('the same tasks compare equal whether their numbers are packed in two units a task or four', () => {
    // Partitions up to 65535 and epochs from -1 to 65534 take two units a task; one beyond, four.
    const edges: [number, number][] = [
      [0, -1],
      [65535, 65534],
      [65535, 65535],
      [65536, 0],
      [3, -2],
    ]
    for (const [p, e] of edges) {
      const small = new TaskListBuilder().set('0', 1, 1).set('0', p, 1).build()
      const edge = new TaskListBuilder().set('0', 1, 1).set('0', p, e).build()
      assert.equal(edge.epoch('0', p), e, `${p}@${e}`)
      assert.equal(edge.epoch('0', 1), 1)
      assert.equal(edge.size, small.size)
      assert.ok(edge.sameTasks(small) && small.sameTasks(edge), `${p}@${e}`)
      assert.equal(edge.sameTasksAndEpochs(small), e === 1)
      assert.ok(edge.has('0', p) && small.isSubsetOf(edge) && edge.isSubsetOf(small))
      assert.deepEqual(
        edge.bySubtopology().get('0'),
        [1, p].sort((a, b) => a - b),
      )
      // Built again from its record, the same list.
      assert.ok(taskEpochsFromRecord(taskEpochsToRecord(edge), 0).sameTasksAndEpochs(edge))
    }
  })
})
