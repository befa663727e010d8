// The row's load-side cost: the load threads' CPU per heartbeat they sent, and the heartbeats sent
// per socket write (a turn's frames on one connection go out together).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadPerSend } from '../../tools/soak/soak.js'

test('load CPU per heartbeat sent and heartbeats per write, from the minute counts', () => {
  const row = { loadCpuMs: 600, sendsMs1: 4000, sendsMs2: 3000, sendsMs3: 2000, sendsMs4Plus: 1000 }
  assert.equal(loadPerSend({ ...row, socketWrites: 4000 }), '60, 2.50')
  assert.equal(loadPerSend({ ...row, loadCpuMs: 450, socketWrites: 10000 }), '45, 1.00')
})

test('a minute without sends or without a load-side CPU reading shows no figure', () => {
  const none = { loadCpuMs: 0, sendsMs1: 0, sendsMs2: 0, sendsMs3: 0, sendsMs4Plus: 0, socketWrites: 0 }
  assert.equal(loadPerSend(none), '—, —')
  assert.equal(loadPerSend({ ...none, loadCpuMs: Number.NaN, sendsMs1: 10, socketWrites: 5 }), '—, 2.00')
})
