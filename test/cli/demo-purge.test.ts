// Which repartition records a demo member deletes: Kafka Streams' rule (StreamTask.purgeableOffsets
// over the active tasks, TaskManager.maybePurgeCommittedRecords), on the orders application.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { purgeableOffsets, repartitionSourceTopics } from '../../src/cli/demo-data.js'
import { ordersApplication } from '../../src/cli/demo.js'

const REPARTITION = 'demo-orders-orders-by-customer-repartition'

describe('the demo members’ repartition purge', () => {
  const app = ordersApplication()
  const repartition = repartitionSourceTopics(app.topology, app.applicationId)

  it('knows the orders application’s repartition topic by its full name', () => {
    assert.deepEqual([...repartition], [REPARTITION])
  })

  it('deletes before the committed offset of each repartition partition of its active tasks', () => {
    const active = [
      { topic: 'orders', partition: 0 },
      { topic: 'customers', partition: 1 },
      { topic: REPARTITION, partition: 1 },
      { topic: REPARTITION, partition: 2 },
    ]
    const committed = new Map([
      ['orders-0', 40],
      ['customers-1', 6],
      [`${REPARTITION}-1`, 17],
      [`${REPARTITION}-2`, 0],
    ])
    assert.deepEqual(purgeableOffsets(active, committed, repartition), [
      { topic: REPARTITION, partition: 1, offset: 17 },
      { topic: REPARTITION, partition: 2, offset: 0 },
    ])
  })

  it('deletes nothing of a partition it has not committed, nor of one it no longer owns', () => {
    const active = [
      { topic: REPARTITION, partition: 0 },
      { topic: REPARTITION, partition: 1 },
    ]
    // partition 0: owned, never committed by this member; partition 2: committed, then lost
    const committed = new Map([
      [`${REPARTITION}-1`, 9],
      [`${REPARTITION}-2`, 30],
    ])
    assert.deepEqual(purgeableOffsets(active, committed, repartition), [
      { topic: REPARTITION, partition: 1, offset: 9 },
    ])
    assert.deepEqual(purgeableOffsets(active, new Map([[`${REPARTITION}-0`, -1]]), repartition), [])
    assert.deepEqual(purgeableOffsets([], committed, repartition), [])
  })

  it('deletes nothing of an application without repartition topics', () => {
    assert.deepEqual(
      purgeableOffsets([{ topic: REPARTITION, partition: 0 }], new Map([[`${REPARTITION}-0`, 5]]), new Set()),
      [],
    )
  })
})
