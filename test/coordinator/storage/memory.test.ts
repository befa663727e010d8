import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MemoryRecordStore } from '../../../src/coordinator/storage/memory.js'
import { rec, runRecordStoreContract, show } from './contract.js'

runRecordStoreContract('memory', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  return { store, cleanup: async () => {} }
})

test('memory: the data belongs to the instance and survives close and open of it', async () => {
  const store = new MemoryRecordStore()
  await store.open()
  await store.append(0, [rec('a', '1')])
  await store.close()
  await store.open()
  assert.deepEqual(show(await store.load(0)), [['a', '1']])
  await store.close()
})
